//! `slsm`: admin commands, a db_bench-compatible benchmark and plots for the
//! slsm storage engine. See `slsm --help`.

mod admin;
mod cli;
mod dump;
mod exit;
mod plot;
mod serve;

use clap::Parser;

fn main() {
    slsm_cli::allocator::tune();
    let args = match cli::Cli::try_parse() {
        Ok(a) => a,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors exit 2.
            let _ = e.print();
            std::process::exit(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let code = match cli::run(args) {
        Ok(code) => code,
        // The reader of stdout went away (`slsm scan DB | head`): not an error.
        Err(e) if exit::is_broken_pipe(&e) => exit::OK,
        Err(e) => {
            eprintln!("slsm: error: {}", slsm_cli::error_message(&e));
            exit::code_for(&e)
        }
    };
    std::process::exit(code);
}

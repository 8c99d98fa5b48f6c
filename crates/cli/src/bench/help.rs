//! The text of `slsm bench --help` (and of the peers' harnesses).

/// Help text for `slsm bench --help` (and the fjall peer's).
pub fn help(program: &str, engine_help: &str) -> String {
    format!(
        "\
Usage: {program} [--flag=value ...]

A db_bench-compatible benchmark: RocksDB db_bench's flags, workloads, key
generation and output lines, so one command line runs against both tools.

Workloads (--benchmarks=a,b,c, run in order on one database):
  fillseq           write --num keys in sequential order (fresh database)
  fillrandom        write --num random keys, uniform over [0,num) with
                    replacement (~63% distinct) (fresh database)
  filluniquerandom  write each of the --num keys once, in random order (fresh)
  fillsync, fill100K  fillrandom of --num/1000 keys, synced / with
                    100,000-byte values (fresh database)
  fillbatch         fillseq in batches of 1,000 keys (fresh database)
  overwrite         write --num random keys into the existing database
  readrandom        --reads random point reads; reports (found of reads found)
  readmissing       --reads random reads of absent keys (each key less its
                    last byte, as db_bench)
  readhot           --reads random reads within the first 1% of the keys
  readseq           scan up to --reads entries from the first key
  readreverse       scan up to --reads entries from the last key, descending
  multireadrandom   --reads random keys, --batch_size keys per multi-get
  seekrandom        --reads random seeks, each followed by --seek_nexts nexts
  readwhilewriting  --threads readers doing readrandom plus one writer doing
                    random puts until the readers finish; readers' throughput
  seekrandomwhilewriting, multireadwhilewriting
                    the same with seekrandom / multireadrandom readers
  updaterandom      --reads random read-modify-writes (a get, then a put)
  readrandomwriterandom
                    --reads random ops, --readwritepercent of them gets, the
                    rest puts
  deleterandom      delete --num random keys (batched by --batch_size)
  deleteseq         delete keys 0..num in order (batched by --batch_size)
  flush, compact, stats   sync / full compaction / print engine statistics
  waitforcompaction wait until background flushes and compactions finish
                    (other db_bench benchmarks print 'skipped')
  <name>_mem        memtable mode of fillseq/fillrandom/overwrite/readrandom/
                    readseq/readreverse/multireadrandom/seekrandom: the pure in-memory
                    path, WAL off and nothing on disk (slsm: the engine on an
                    in-memory file system; same as --memtable for all)

Flags (db_bench names and defaults unless noted):
  --num=N                keys, key space [0,N) (1000000)
  --reads=N              reads per thread, -1 = num (-1)
  --writes=N             writes per thread for fill/overwrite, -1 = num (-1)
  --deletes=N            deletes per thread, -1 = num (-1)
  --key_size=N           key bytes: the low min(N,8) bytes of the key integer
                         big-endian, padded with '0' (16)
  --value_size=N         value bytes (100)
  --batch_size=N         entries per write batch and per multi-get (1)
  --threads=N            threads, each doing the full op count (1)
  --db=DIR               database directory ($TMPDIR/slsm-bench)
  --use_existing_db      keep DIR and skip fill workloads (false)
  --disable_wal          no write-ahead log (false)
  --sync                 sync every write (false)
  --seed=N               seed base; thread i uses seed+i (0)
  --histogram            print latency histograms (false)
  --write_buffer_size=N  bytes per memory buffer (67108864)
  --seek_nexts=N         nexts after each seek (0)
  --benchmark_write_rate_limit=B
                         bytes per second the *whilewriting workloads' writer
                         may write, keys and values (0: unlimited)
  --readwritepercent=P   reads in readrandomwriterandom, percent (90)
  --compression_type=T   block compression asked of the engine: none, lz4,
                         zstd (none)
  --compression_ratio=R  generated values compress to about R (0.5)
  --cache_size=N         bytes of block cache (33554432)
  --statistics           print the engine's statistics at the end
  --memtable             every workload in memtable mode (false)
  --json=FILE            write all results as JSON (not a db_bench flag)
  --progress=BOOL        progress bars on stderr (default: if stderr is a tty)
{engine_help}
Booleans take --flag, --flag=1/0/true/false or --noflag; values take
--flag=value or --flag value. Other db_bench flags are accepted with a
warning on stderr and ignored.

Output: one line per workload on stdout in db_bench's format
  fillrandom   :       5.707 micros/op 175234 ops/sec 0.571 seconds 100000 operations;   19.4 MB/s
then, with --histogram, db_bench's percentile block, and at the end the peak
resident memory (VmHWM).
"
    )
}

use proptest::prelude::*;

use super::catalog::catalog;
use super::selector::{Denied, Selector};
use super::user::{hash_password, merge_selectors, User};
use super::RuleError;

fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn user(rules: &[&str]) -> User {
    let mut u = User::new("u", false);
    for r in rules {
        u.apply(r.as_bytes(), false).unwrap();
    }
    u
}

fn check(u: &User, words: &[&str]) -> Result<(), Denied> {
    let a = argv(words);
    u.check(catalog().of_request(&a), &a)
}

#[test]
fn a_new_user_may_do_nothing_and_cannot_log_in() {
    let u = User::new("u", false);
    assert!(!u.accepts(b""));
    assert_eq!(check(&u, &["get", "k"]), Err(Denied::Command));
    assert_eq!(u.describe(), "off resetchannels -@all");
}

#[test]
fn the_default_user_is_unrestricted() {
    let d = User::default_user();
    assert!(d.unrestricted());
    assert!(d.accepts(b"anything"));
    assert_eq!(d.describe(), "on nopass ~* &* +@all");
}

#[test]
fn passwords_are_kept_as_hashes_and_checked() {
    let u = user(&["on", ">secret"]);
    assert_eq!(u.passwords, vec![hash_password(b"secret")]);
    assert!(u.accepts(b"secret"));
    assert!(!u.accepts(b"Secret"));
    let mut off = u.clone();
    off.apply(b"off", false).unwrap();
    assert!(!off.accepts(b"secret"), "a disabled user cannot log in");
    let mut u = u;
    assert_eq!(u.apply(b"<wrong", false), Err(RuleError::NoSuchPassword));
    assert_eq!(u.apply(b"#abc", false), Err(RuleError::BadHash));
}

#[test]
fn keys_are_checked_by_pattern_and_by_access() {
    let u = user(&["on", "nopass", "+@all", "~user:*", "%R~ro:*", "%W~wo:*"]);
    assert_eq!(check(&u, &["set", "user:1", "v"]), Ok(()));
    assert_eq!(check(&u, &["set", "other", "v"]), Err(Denied::Key(1)));
    assert_eq!(check(&u, &["get", "ro:1"]), Ok(()));
    assert_eq!(check(&u, &["set", "ro:1", "v"]), Err(Denied::Key(1)));
    assert_eq!(check(&u, &["set", "wo:1", "v"]), Ok(()));
    assert_eq!(check(&u, &["get", "wo:1"]), Err(Denied::Key(1)));
    // COPY reads its source and writes its destination.
    assert_eq!(check(&u, &["copy", "ro:1", "wo:1"]), Ok(()));
    assert_eq!(check(&u, &["copy", "wo:1", "ro:1"]), Err(Denied::Key(1)));
}

#[test]
fn channels_are_checked_and_patterns_compared_literally() {
    let u = user(&["on", "+@all", "allkeys", "&news.*"]);
    assert_eq!(check(&u, &["publish", "news.tech", "m"]), Ok(()));
    assert_eq!(
        check(&u, &["publish", "sport", "m"]),
        Err(Denied::Channel(1))
    );
    assert_eq!(check(&u, &["psubscribe", "news.*"]), Ok(()));
    assert_eq!(
        check(&u, &["psubscribe", "news.t*"]),
        Err(Denied::Channel(1))
    );
    assert_eq!(check(&u, &["unsubscribe", "sport"]), Ok(()));
}

#[test]
fn subcommands_and_first_arguments() {
    let u = user(&[
        "+@all",
        "-client",
        "+client|id",
        "-select",
        "+select|0",
        "allkeys",
    ]);
    assert_eq!(check(&u, &["client", "id"]), Ok(()));
    assert_eq!(check(&u, &["client", "kill", "x"]), Err(Denied::Command));
    assert_eq!(check(&u, &["select", "0"]), Ok(()));
    assert_eq!(check(&u, &["select", "1"]), Err(Denied::Command));
    let mut u = u;
    assert_eq!(
        u.apply(b"+client|id|x", false),
        Err(RuleError::FirstArgOfSubcommand)
    );
    assert_eq!(u.apply(b"+nosuch", false), Err(RuleError::Unknown));
    assert_eq!(u.apply(b"+@nosuch", false), Err(RuleError::Unknown));
}

#[test]
fn another_selector_may_allow_what_the_root_refuses() {
    let u = user(&["on", "+get", "~a*", "(+set ~b*)"]);
    assert_eq!(check(&u, &["get", "a1"]), Ok(()));
    assert_eq!(check(&u, &["set", "b1", "v"]), Ok(()));
    assert_eq!(check(&u, &["set", "a1", "v"]), Err(Denied::Key(1)));
    assert_eq!(check(&u, &["get", "b1"]), Err(Denied::Key(1)));
    assert_eq!(
        u.describe(),
        "on ~a* resetchannels -@all +get (~b* resetchannels -@all +set)"
    );
}

#[test]
fn a_selector_over_several_words_is_joined() {
    let merged = merge_selectors(&argv(&["on", "(+get", "~x)", "+set"])).unwrap();
    assert_eq!(merged, argv(&["on", "(+get ~x)", "+set"]));
    assert_eq!(merge_selectors(&argv(&["(+get", "~x"])), Err(0));
}

#[test]
fn rules_are_described_as_redis_describes_them() {
    let rules = |u: &User| u.selectors[0].describe_commands();
    assert_eq!(
        rules(&user(&["+@all", "-client|kill"])),
        "+@all -client|kill"
    );
    assert_eq!(rules(&user(&["+memory|doctor"])), "-@all +memory|doctor");
    assert_eq!(
        rules(&user(&["+memory|doctor", "+memory"])),
        "-@all +memory"
    );
    assert_eq!(rules(&user(&["+@all", "+client|id"])), "+@all");
    let translated = rules(&user(&[
        "+@all",
        "-@string",
        "+incr",
        "-debug",
        "+debug|digest",
    ]));
    assert_eq!(translated, "+@all -@string -debug +debug|digest +incr");
    for c in crate::command_docs::CATEGORIES {
        assert_eq!(
            rules(&user(&["+@all", &format!("-@{c}")])),
            format!("+@all -@{c}")
        );
        assert_eq!(
            rules(&user(&["-@all", &format!("+@{c}")])),
            format!("-@all +@{c}")
        );
    }
}

/// A random command rule, over commands, subcommands, categories and
/// first arguments.
fn rule() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = catalog().commands.iter().map(|c| c.name).collect();
    let categories: Vec<&'static str> = crate::command_docs::CATEGORIES.to_vec();
    prop_oneof![
        (any::<bool>(), prop::sample::select(names))
            .prop_map(|(plus, n)| format!("{}{n}", if plus { "+" } else { "-" })),
        (any::<bool>(), prop::sample::select(categories))
            .prop_map(|(plus, c)| format!("{}@{c}", if plus { "+" } else { "-" })),
        prop::sample::select(vec!["+@all", "-@all", "+select|0", "+debug|object"])
            .prop_map(str::to_string),
    ]
}

proptest! {
    /// What `ACL GETUSER` says of a selector's commands, applied to a
    /// fresh selector, allows exactly the same commands (Redis panics if
    /// its description ever fails this).
    #[test]
    fn a_described_selector_reads_back_the_same(rules in prop::collection::vec(rule(), 0..24)) {
        let mut s = Selector::new(false);
        for r in &rules {
            s.apply(r).unwrap();
        }
        let described = s.describe_commands();
        let mut again = Selector::new(false);
        for word in described.split(' ') {
            again.apply(word).unwrap();
        }
        prop_assert!(again.same_commands(&s), "{rules:?} described as {described}");
        prop_assert_eq!(again.describe_commands(), described);
    }
}

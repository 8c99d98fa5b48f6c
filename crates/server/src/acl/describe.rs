//! How a selector reads back (`ACL GETUSER`, `ACL LIST`, the ACL file):
//! its keys and channels as written, and its commands as Redis 7.0's
//! `ACLDescribeSelectorCommandRules` finds them: `+@all` or `-@all`, the
//! categories that fit best, then single commands, so that applying the
//! words to an empty selector gives the same bitmap again (a property
//! test checks it; Redis panics if it ever does not).

use super::catalog::{catalog, FUTURE};
use super::selector::{KeyPattern, Selector};
use crate::command_docs::CATEGORIES;

impl Selector {
    /// `ACL GETUSER`'s and `ACL LIST`'s command rules: `+@all` or `-@all`,
    /// then the categories that fit best, then single commands, so that
    /// applying them to an empty selector gives this bitmap again.
    pub fn describe_commands(&self) -> String {
        let additive = !self.bit(FUTURE);
        let mut rules = vec![if additive { "-@all" } else { "+@all" }.to_string()];
        let mut fake = Selector::new(false);
        let _ = fake.apply(&rules[0]);
        let mut temp = self.clone();
        let mut applied = vec![false; CATEGORIES.len()];
        while let Some(best) = best_category(&temp, &applied, additive) {
            applied[best] = true;
            fake.change_category(best, additive);
            temp.change_category(best, !additive);
            let sign = if additive { "+" } else { "-" };
            rules.push(format!("{sign}@{}", CATEGORIES[best]));
        }
        for cmd in &catalog().commands {
            let mine = self.bit(cmd.id);
            if mine != fake.bit(cmd.id) {
                rules.push(format!("{}{}", if mine { "+" } else { "-" }, cmd.name));
                fake.change(cmd, mine);
            }
            if let Some(args) = self.first_args.get(&cmd.id).filter(|_| !mine) {
                rules.extend(args.iter().map(|a| format!("+{}|{a}", cmd.name)));
            }
        }
        rules.join(" ")
    }

    /// Keys as `ACL GETUSER` shows them: `~*`, or the patterns.
    pub fn describe_keys(&self) -> String {
        match self.all_keys {
            true => "~*".into(),
            false => join(self.keys.iter().map(KeyPattern::describe)),
        }
    }

    /// Channels as `ACL GETUSER` shows them: `&*`, or the patterns.
    pub fn describe_channels(&self) -> String {
        match self.all_channels {
            true => "&*".into(),
            false => join(
                self.channels
                    .iter()
                    .map(|c| format!("&{}", String::from_utf8_lossy(c))),
            ),
        }
    }

    /// The whole selector in `ACL LIST`'s form.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match self.all_keys {
            true => parts.push("~*".to_string()),
            false => parts.extend(self.keys.iter().map(KeyPattern::describe)),
        }
        match self.all_channels {
            true => parts.push("&*".to_string()),
            false => {
                parts.push("resetchannels".to_string());
                parts.extend(
                    self.channels
                        .iter()
                        .map(|c| format!("&{}", String::from_utf8_lossy(c))),
                );
            }
        }
        parts.push(self.describe_commands());
        parts.join(" ")
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(" ")
}

/// The category that best narrows the difference between `temp` and the
/// start (`-@all` when `additive`, else `+@all`): more of its commands
/// agree than differ, fewest differences first, then most agreement.
fn best_category(temp: &Selector, applied: &[bool], additive: bool) -> Option<usize> {
    let mut best = None;
    let (mut min_diff, mut max_same) = (usize::MAX, 0);
    for (i, _) in CATEGORIES.iter().enumerate().filter(|(i, _)| !applied[*i]) {
        let (mut on, mut off) = (0, 0);
        for cmd in catalog().in_category(i) {
            match temp.bit(cmd.id) {
                true => on += 1,
                false => off += 1,
            }
        }
        let (diff, same) = if additive { (off, on) } else { (on, off) };
        if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
            best = Some(i);
            min_diff = diff;
            max_same = same;
        }
    }
    best
}

//! What a bisection's page and a track's page (`html::bisect`,
//! `html::track`) say alike: a revision's label under the plot's axis,
//! and what every boot of the series had beside the workload (its kernel
//! command line, its mechanisms), in the page's closing line. Each page
//! keeps its own sections, plot caption and the rest of that line.

/// A commit as the plot labels it: its first 7 hex digits.
pub fn commit_label(commit: &str) -> String {
    commit.chars().take(7).collect()
}

/// What every boot had: ", kernel command line '...'" and ", mechanisms
/// ...", each only when given.
pub fn every_boot(append: &str, mechanisms: &[String]) -> String {
    let mut out = String::new();
    if !append.is_empty() {
        out.push_str(&format!(", kernel command line '{append}'"));
    }
    if !mechanisms.is_empty() {
        out.push_str(&format!(", mechanisms {}", mechanisms.join(" ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_is_said_only_when_given() {
        assert_eq!(every_boot("", &[]), "");
        assert_eq!(
            every_boot("audit=1", &["audit:rules=F".into(), "seccomp".into()]),
            ", kernel command line 'audit=1', mechanisms audit:rules=F seccomp"
        );
        assert_eq!(commit_label("0123456789abcdef"), "0123456");
    }
}

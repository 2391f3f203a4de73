//! The `lsm=` a guest boots with so that the LSM a mechanism needs runs:
//! the image's own default order (CONFIG_LSM of its config), with the
//! missing LSM added and, for SELinux or AppArmor, the other exclusive
//! major LSMs left out (only the first exclusive LSM of the list is
//! enabled, so `apparmor,selinux` would run AppArmor alone).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::usage_bail;

/// LSMs of which a kernel enables only the first listed (LSM_FLAG_EXCLUSIVE).
const EXCLUSIVE: [&str; 3] = ["selinux", "apparmor", "smack"];

/// The order used when the image's config cannot be found: upstream's
/// default with every LSM secperf measures.
const FALLBACK: &str = "landlock,lockdown,yama,integrity,apparmor,selinux,bpf";

/// The config file of a kernel image: /boot/config-REL beside
/// /boot/vmlinuz-REL, or .config at the top of a build tree for
/// arch/x86/boot/bzImage.
pub fn config_of(image: &Path) -> Option<PathBuf> {
    let name = image.file_name()?.to_str()?;
    let dir = image.parent()?;
    if let Some(release) = name.strip_prefix("vmlinuz-") {
        let p = dir.join(format!("config-{release}"));
        return p.is_file().then_some(p);
    }
    image
        .ancestors()
        .skip(1)
        .take(4)
        .map(|d| d.join(".config"))
        .find(|p| p.is_file())
}

/// CONFIG_LSM of a kernel config's text.
pub fn default_order(config: &str) -> Option<Vec<String>> {
    let line = config.lines().find_map(|l| l.strip_prefix("CONFIG_LSM="))?;
    Some(
        line.trim_matches('"')
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
    )
}

/// The `lsm=` word for `wanted` LSMs (e.g. ["selinux", "bpf"]) on top of
/// `order`, or None when nothing is wanted. Two exclusive LSMs cannot run
/// in one boot: a usage error.
pub fn lsm_arg(order: &[String], wanted: &[&str]) -> Result<Option<String>> {
    if wanted.is_empty() {
        return Ok(None);
    }
    let exclusive: Vec<&&str> = wanted.iter().filter(|w| EXCLUSIVE.contains(w)).collect();
    if exclusive.len() > 1 {
        usage_bail!(
            "{} cannot run in one boot: a kernel enables only the first exclusive LSM of its \
             lsm= list; measure them in separate runs (one --vm each)",
            exclusive
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        );
    }
    let mut list: Vec<String> = order
        .iter()
        .filter(|l| match exclusive.first() {
            Some(keep) => !EXCLUSIVE.contains(&l.as_str()) || l.as_str() == **keep,
            None => true,
        })
        .cloned()
        .collect();
    for w in wanted {
        if !list.iter().any(|l| l == w) {
            list.push(w.to_string());
        }
    }
    Ok(Some(format!("lsm={}", list.join(","))))
}

/// [`lsm_arg`] for an image, from its config or the fallback order.
/// Returns the word and where the order came from.
pub fn for_image(image: &Path, wanted: &[&str]) -> Result<Option<(String, String)>> {
    let (order, from) = match config_of(image)
        .and_then(|p| Some((default_order(&std::fs::read_to_string(&p).ok()?)?, p)))
    {
        Some((order, p)) => (order, format!("CONFIG_LSM of {}", p.display())),
        None => (
            FALLBACK.split(',').map(String::from).collect(),
            "upstream's default order (no config found beside the image)".to_string(),
        ),
    };
    Ok(lsm_arg(&order, wanted)?.map(|w| (w, from)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN: &str =
        "landlock,lockdown,yama,loadpin,safesetid,integrity,apparmor,selinux,smack,tomoyo,bpf";

    fn order() -> Vec<String> {
        DEBIAN.split(',').map(String::from).collect()
    }

    #[test]
    fn selinux_is_enabled_by_leaving_the_other_exclusive_lsms_out() {
        assert_eq!(
            lsm_arg(&order(), &["selinux"]).unwrap().unwrap(),
            "lsm=landlock,lockdown,yama,loadpin,safesetid,integrity,selinux,tomoyo,bpf"
        );
        assert_eq!(
            lsm_arg(&order(), &["apparmor", "bpf"]).unwrap().unwrap(),
            "lsm=landlock,lockdown,yama,loadpin,safesetid,integrity,apparmor,tomoyo,bpf"
        );
        let no_bpf: Vec<String> = ["landlock", "yama", "apparmor"].map(String::from).into();
        assert_eq!(
            lsm_arg(&no_bpf, &["bpf"]).unwrap().unwrap(),
            "lsm=landlock,yama,apparmor,bpf"
        );
        assert_eq!(lsm_arg(&order(), &[]).unwrap(), None);
    }

    #[test]
    fn two_exclusive_lsms_are_refused() {
        let e = lsm_arg(&order(), &["selinux", "apparmor"]).unwrap_err();
        assert_eq!(crate::error::exit_code(&e), 2);
        assert!(e.to_string().contains("separate runs"), "{e}");
    }

    #[test]
    fn the_order_comes_from_the_config_beside_the_image() {
        let d = tempfile::tempdir().unwrap();
        let image = d.path().join("vmlinuz-6.1.0-test");
        std::fs::write(&image, "").unwrap();
        let (_, from) = for_image(&image, &["bpf"]).unwrap().unwrap();
        assert!(from.contains("upstream"), "{from}");
        std::fs::write(
            d.path().join("config-6.1.0-test"),
            format!("CONFIG_X=y\nCONFIG_LSM=\"{DEBIAN}\"\n"),
        )
        .unwrap();
        let (word, from) = for_image(&image, &["selinux"]).unwrap().unwrap();
        assert!(from.contains("config-6.1.0-test"), "{from}");
        assert!(
            word.contains(",selinux,") && !word.contains("apparmor"),
            "{word}"
        );
        // A build tree's bzImage finds .config at the top.
        let tree = d.path().join("linux");
        std::fs::create_dir_all(tree.join("arch/x86/boot")).unwrap();
        std::fs::write(tree.join(".config"), "CONFIG_LSM=\"yama,bpf\"\n").unwrap();
        let bz = tree.join("arch/x86/boot/bzImage");
        std::fs::write(&bz, "").unwrap();
        assert_eq!(config_of(&bz), Some(tree.join(".config")));
    }
}

//! `secperf probe`: the machine's security configuration.

use anyhow::Result;

pub fn probe(json: bool) -> Result<()> {
    let info = crate::probe::probe();
    if json {
        return super::print_json(&info);
    }
    super::emit_fmt!("{}", crate::probe::render(&info).trim_end());
    Ok(())
}

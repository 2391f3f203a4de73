//! The order in which a kernel A/B's arms boot: the live design's seeded
//! coin for two arms, a seeded shuffle for more.

use crate::engine::ab::design::{Design, pair_order};
use crate::mechanisms::Arm;
use crate::stats::bootstrap::Rng;

/// The order in which one block's arms boot: for two arms the seeded coin
/// of the live design (AB or BA); for more, a seeded shuffle.
pub(super) fn block_order(rng: &mut Rng, arms: usize) -> Vec<usize> {
    if arms == 2 {
        return pair_order(rng)
            .map(|a| (a == Arm::Treatment) as usize)
            .to_vec();
    }
    let mut order: Vec<usize> = (0..arms).collect();
    for i in (1..arms).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// The arms' boot order of each block (0: baseline, then the others), as
/// the seeded draws of `design` will make it.
pub fn boot_order(design: &Design, arms: usize) -> Vec<Vec<usize>> {
    let mut rng = Rng::new(design.seed);
    (0..design.pairs)
        .map(|_| block_order(&mut rng, arms))
        .collect()
}

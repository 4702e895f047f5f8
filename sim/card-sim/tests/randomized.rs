//! The randomized build (`SIM_X`): a card top is built as its `_x` twin, whose RTL has no
//! declaration initialisers and whose open values come from `SIM_X_SEED`, so the values the
//! card shows before its first reset follow the seed; without it they are the initialisers'.
//! One test in its own binary, because it sets the process's environment.

use card_sim::{Model, Top, SEED_ENV, X_ENV};

/// Every output of `sim_top` right after it is built, before any clock edge or reset.
fn outputs_at_start() -> (String, Vec<u64>) {
    let m = Model::new(Top::SimTop).expect("build sim_top");
    let names: Vec<String> = m.port_names().map(str::to_string).collect();
    let values = names
        .iter()
        .filter_map(|n| m.port(n).ok())
        .filter(|&p| m.is_output(p) && p.width() <= 64)
        .map(|p| m.get(p))
        .collect();
    (m.top().name().to_string(), values)
}

#[test]
fn the_randomized_twin_starts_from_the_seed() {
    // SAFETY: this binary has one test, so no other thread reads the environment meanwhile.
    unsafe {
        std::env::remove_var(X_ENV);
    }
    let (plain_top, plain) = outputs_at_start();
    assert_eq!(plain_top, "sim_top");
    assert_eq!(
        outputs_at_start().1,
        plain,
        "the plain build is the same every time"
    );

    let mut seen = Vec::new();
    for seed in ["1", "2", "3"] {
        // SAFETY: as above.
        unsafe {
            std::env::set_var(X_ENV, "1");
            std::env::set_var(SEED_ENV, seed);
        }
        let (top, values) = outputs_at_start();
        assert_eq!(top, "sim_top_x", "SIM_X builds the twin");
        let (_, again) = outputs_at_start();
        assert_eq!(values, again, "seed {seed}: one seed gives one start");
        seen.push(values);
    }
    assert!(
        seen.windows(2).any(|w| w[0] != w[1]) && seen.iter().any(|v| *v != plain),
        "the outputs before reset do not depend on the seed: {seen:?} against {plain:?}"
    );

    // The deprecated names, alone, still choose the twin and its seed.
    // SAFETY: as above.
    unsafe {
        std::env::remove_var(X_ENV);
        std::env::remove_var(SEED_ENV);
        std::env::set_var("CARD_SIM_X", "1");
        std::env::set_var("CARD_SIM_SEED", "2");
    }
    let (top, values) = outputs_at_start();
    assert_eq!(top, "sim_top_x", "CARD_SIM_X still builds the twin");
    assert_eq!(values, seen[1], "CARD_SIM_SEED=2 gives seed 2's start");
    // Beside the new names, the new ones win: SIM_X=0 builds the plain top.
    // SAFETY: as above.
    unsafe {
        std::env::set_var("SIM_X", "0");
    }
    let (top, _) = outputs_at_start();
    assert_eq!(top, "sim_top", "SIM_X=0 wins over CARD_SIM_X=1");
    // SAFETY: as above.
    unsafe {
        for k in ["SIM_X", "CARD_SIM_X", "CARD_SIM_SEED"] {
            std::env::remove_var(k);
        }
    }
}

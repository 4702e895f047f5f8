//! The DDR3 model's storage as the runtime's named memories: what the generic hook lists and
//! reaches, and that card-sim's `DdrBackdoor` is that hook for kind `ddr3`.

use card_sim::{DdrBackdoor, Model, Result, SimError, Top, DDR3_MEMORY};

#[test]
fn every_ddr3_instance_is_a_named_memory_of_its_model() -> Result<()> {
    // ddr3_model_tb holds two instances (ddr_std, ddr_alt) of the DDR3 model; each registers
    // its store with the runtime when its initial block runs, at the model's first evaluation.
    let mut m = Model::new(Top::Ddr3ModelTb)?;
    let mems = m.memories();
    assert_eq!(mems.len(), 2, "{mems:?}");
    assert!(mems.iter().all(|x| x.kind == DDR3_MEMORY), "{mems:?}");
    for want in ["ddr_std", "ddr_alt"] {
        assert!(
            mems.iter().any(|x| x.name.ends_with(&format!(".{want}"))),
            "{want} in {mems:?}"
        );
    }
    assert_eq!(m.ddr_instances().len(), 2);

    // A write through the generic hook is what the DDR3 backdoor reads, in that instance only.
    let data = [0xa5u8, 0x5a, 0x01, 0x02, 0x03];
    m.memory_write(DDR3_MEMORY, Some("ddr_alt"), 0x1_0003, &data)?;
    let mut got = [0u8; 5];
    m.ddr_read_in("ddr_alt", 0x1_0003, &mut got)?;
    assert_eq!(got, data);
    m.ddr_read_in("ddr_std", 0x1_0003, &mut got)?;
    assert_eq!(got, [0; 5], "the other instance keeps its own memory");
    let size = m.ddr_size_in("ddr_std")?;
    assert_eq!(m.memory(DDR3_MEMORY, Some("ddr_std"))?.1.size, size);
    Ok(())
}

#[test]
fn a_kind_the_model_lacks_is_a_typed_error() -> Result<()> {
    let m = Model::new(Top::Ddr3ModelTb)?;
    let mut buf = [0u8; 4];
    let err = m
        .memory_read("sram", None, 0, &mut buf)
        .expect_err("no sram");
    assert!(
        matches!(&err, SimError::NoMemory { kind, .. } if kind == "sram"),
        "{err}"
    );
    // A top without a DDR3 model has no memories at all.
    let core = Model::new(Top::DualClockProbe)?;
    assert!(core.memories().is_empty());
    Ok(())
}

#[test]
fn a_dropped_model_releases_its_memories() -> Result<()> {
    // Dropping a model closes its stores (its final blocks, or the runtime's release when
    // they do not run): a new model, which may get the same context address, lists only its
    // own memories and they read zero.
    for round in 0..3u8 {
        let mut m = Model::new(Top::Ddr3ModelTb)?;
        assert_eq!(
            m.memories().len(),
            2,
            "round {round}: only this model's memories"
        );
        let mut got = [0xffu8; 4];
        m.ddr_read_in("ddr_std", 0x40, &mut got)?;
        assert_eq!(got, [0; 4], "round {round}: a fresh store reads zero");
        m.ddr_write_in("ddr_std", 0x40, &[round + 1; 4])?;
    }
    Ok(())
}

//! The cxx bridge to the C++ model interface (`cpp/sim_model.h`, `cpp/sim_runtime.h`).

#[cxx::bridge(namespace = "sim_runtime")]
pub(crate) mod bridge {
    /// One port of a verilated top, with the address of its storage inside the model.
    #[derive(Debug, Clone)]
    pub(crate) struct PortDesc {
        name: String,
        width: u32,
        output: bool,
        addr: usize,
    }

    /// One named memory of a model (`cpp/sim_memory.h`).
    #[derive(Debug, Clone)]
    pub(crate) struct MemoryDesc {
        kind: String,
        name: String,
        size: u64,
    }

    unsafe extern "C++" {
        include!("sim_runtime.h");

        type SimModel;

        fn eval(self: Pin<&mut SimModel>, ps: u64) -> Result<()>;
        fn dump(self: Pin<&mut SimModel>, ps: u64);
        fn finish(self: Pin<&mut SimModel>) -> Result<()>;
        fn got_finish(&self) -> bool;

        fn model_ports(m: &SimModel) -> Vec<PortDesc>;
        fn model_memories(m: &SimModel) -> Vec<MemoryDesc>;
        fn model_take_output(m: Pin<&mut SimModel>) -> String;
        fn model_memory_read(m: &SimModel, index: usize, addr: u64, out: &mut [u8]) -> i32;
        fn model_memory_write(m: Pin<&mut SimModel>, index: usize, addr: u64, data: &[u8]) -> i32;
        fn model_write_coverage(m: Pin<&mut SimModel>, path: &str) -> bool;
    }

    // Models come from the generated factories as raw pointers; this makes cxx emit the
    // UniquePtr<SimModel> glue that owns them.
    impl UniquePtr<SimModel> {}
}

pub(crate) use bridge::{
    model_memories, model_memory_read, model_memory_write, model_ports, model_take_output,
    model_write_coverage, MemoryDesc, PortDesc, SimModel,
};

impl PortDesc {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }
    pub(crate) fn width(&self) -> u32 {
        self.width
    }
    pub(crate) fn is_output(&self) -> bool {
        self.output
    }
    pub(crate) fn addr(&self) -> usize {
        self.addr
    }
}

impl MemoryDesc {
    /// Its kind, hierarchical name and size in bytes.
    pub(crate) fn into_parts(self) -> (String, String, u64) {
        (self.kind, self.name, self.size)
    }
}

//! The cxx bridge to the C++ model wrapper (`cpp/card_sim.h`).

#[cxx::bridge(namespace = "card_sim")]
pub(crate) mod bridge {
    /// One port of a verilated top, with the address of its storage inside the model.
    #[derive(Debug, Clone)]
    pub(crate) struct PortDesc {
        name: String,
        width: u32,
        output: bool,
        addr: usize,
    }

    unsafe extern "C++" {
        include!("card_sim.h");

        type SimModel;

        fn new_model(top: &str, name: &str, waves: &str, seed: u64) -> Result<UniquePtr<SimModel>>;
        fn top_names() -> Vec<String>;

        fn eval(self: Pin<&mut SimModel>) -> Result<()>;
        fn set_time(self: Pin<&mut SimModel>, ps: u64);
        fn dump(self: Pin<&mut SimModel>, ps: u64);
        fn finish(self: Pin<&mut SimModel>) -> Result<()>;
        fn got_finish(&self) -> bool;
        fn ports(self: Pin<&mut SimModel>) -> Vec<PortDesc>;
        fn ddr_instances(&self) -> Vec<String>;
        fn ddr_size(&self, index: usize) -> u64;
        fn ddr_read(&self, index: usize, addr: u64, out: &mut [u8]) -> i32;
        fn ddr_write(self: Pin<&mut SimModel>, index: usize, addr: u64, data: &[u8]) -> i32;
    }
}

pub(crate) use bridge::{new_model, top_names, PortDesc, SimModel};

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

//! One top to verilate: a module, its sources and its options.

use std::path::PathBuf;

/// One top to verilate: a module, its sources and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopSpec {
    pub(crate) name: String,
    pub(crate) module: String,
    pub(crate) files: Vec<PathBuf>,
    pub(crate) file_lists: Vec<PathBuf>,
    pub(crate) includes: Vec<PathBuf>,
    pub(crate) lib_dirs: Vec<PathBuf>,
    pub(crate) defines: Vec<(String, Option<String>)>,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) flags: Vec<String>,
    pub(crate) assert: bool,
    pub(crate) strip: Option<PathBuf>,
}

impl TopSpec {
    /// A top built from `module`; its name (the model's and the generated constant's) is the
    /// module's unless [`TopSpec::name`] gives another.
    pub fn new(module: impl Into<String>) -> TopSpec {
        let module = module.into();
        TopSpec {
            name: module.clone(),
            module,
            files: Vec::new(),
            file_lists: Vec::new(),
            includes: Vec::new(),
            lib_dirs: Vec::new(),
            defines: Vec::new(),
            params: Vec::new(),
            flags: Vec::new(),
            assert: true,
            strip: None,
        }
    }

    /// Names the top (for a variant of a module with other parameters or flags).
    pub fn name(mut self, name: impl Into<String>) -> TopSpec {
        self.name = name.into();
        self
    }

    /// The top's name.
    pub fn top_name(&self) -> &str {
        &self.name
    }

    /// The module it builds.
    pub fn module_name(&self) -> &str {
        &self.module
    }

    /// The extra Verilator flags given so far, in order.
    pub fn flags(&self) -> &[String] {
        &self.flags
    }

    /// Adds a source file; any file name, any module inside.
    pub fn file(mut self, path: impl Into<PathBuf>) -> TopSpec {
        self.files.push(path.into());
        self
    }

    /// Adds several source files.
    pub fn files<P: Into<PathBuf>>(mut self, paths: impl IntoIterator<Item = P>) -> TopSpec {
        self.files.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Adds a Verilator `.f` file list (`-f`): sources, `+incdir+`, `-D` lines as vendors ship
    /// them. Paths inside are relative to the working folder, the crate's manifest folder.
    pub fn file_list(mut self, path: impl Into<PathBuf>) -> TopSpec {
        self.file_lists.push(path.into());
        self
    }

    /// Adds an include folder (`-I`) for this top.
    pub fn include(mut self, dir: impl Into<PathBuf>) -> TopSpec {
        self.includes.push(dir.into());
        self
    }

    /// Adds a library folder (`-y`) searched for modules by file name, `<module>.v`.
    pub fn lib_dir(mut self, dir: impl Into<PathBuf>) -> TopSpec {
        self.lib_dirs.push(dir.into());
        self
    }

    /// Defines a preprocessor macro (`-D`) for this top.
    pub fn define<'a>(mut self, name: &str, value: impl Into<Option<&'a str>>) -> TopSpec {
        self.defines
            .push((name.to_string(), value.into().map(str::to_string)));
        self
    }

    /// Overrides a parameter of the top module (`-G<name>=<value>`).
    pub fn param(mut self, name: &str, value: &str) -> TopSpec {
        self.params.push((name.to_string(), value.to_string()));
        self
    }

    /// Passes an extra flag to Verilator for this top (after the defaults, so that, for
    /// example, `--x-assign unique` wins over the default `fast`).
    pub fn flag(mut self, flag: impl Into<String>) -> TopSpec {
        self.flags.push(flag.into());
        self
    }

    /// Turns assertions (immediate and concurrent) on (`--assert`) or off (`--no-assert`); on
    /// by default.
    pub fn assert(mut self, on: bool) -> TopSpec {
        self.assert = on;
        self
    }

    /// Reads the Verilog files of `dir` (a library folder or the folder of a source file of
    /// this top) without the initialisers of their `reg` declarations (`reg [3:0] a = 4'd0, b;`
    /// becomes `reg [3:0] a, b;`), from a copy made at build time. On an FPGA an initialiser
    /// is the value at configuration only, so a randomized build (`--x-initial unique`) of the
    /// copy shows the registers that need a reset and lack one.
    pub fn strip_initialisers(mut self, dir: impl Into<PathBuf>) -> TopSpec {
        self.strip = Some(dir.into());
        self
    }

    /// Whether this top is built with Verilator's random initial values.
    pub fn is_randomized(&self) -> bool {
        self.flags
            .windows(2)
            .any(|w| w[0] == "--x-initial" && w[1] == "unique")
    }
}

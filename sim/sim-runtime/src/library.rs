//! A top's shared library in this process: built (or found in the cache) by sim-build the
//! first time a model of the top is made, loaded once, and never unloaded, since models and
//! the functions they point to must outlive any handle a test drops.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::top::RawFactory;
use crate::{Result, SimError, TopDef};

/// A loaded library of a top: its factory, and whatever its companion source exports.
#[derive(Debug, Clone)]
pub struct Library {
    top: &'static str,
    path: PathBuf,
    handle: usize,
    factory: RawFactory,
}

/// A top's recipe and its companion: what names one library.
type Key = (&'static str, Option<&'static str>);

/// The libraries loaded so far, by top and recipe, so that a second model of a top costs
/// neither a look at its sources nor a `dlopen`.
fn loaded() -> &'static Mutex<HashMap<Key, Library>> {
    static LOADED: OnceLock<Mutex<HashMap<Key, Library>>> = OnceLock::new();
    LOADED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Serialises builds within this process: two threads that want the same top wait for one
/// build (sim-build's file locks do the same across processes).
fn building() -> &'static Mutex<()> {
    static BUILDING: OnceLock<Mutex<()>> = OnceLock::new();
    BUILDING.get_or_init(|| Mutex::new(()))
}

impl Library {
    /// The library of `top`: loaded already, or built or found in the cache and loaded now.
    /// A top that cannot be built gives [`SimError::Build`] with Verilator's or the
    /// compiler's whole message.
    pub fn of(top: TopDef) -> Result<Library> {
        let key = (top.recipe(), top.companion());
        if let Some(lib) = loaded().lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(lib);
        }
        let _one = building().lock();
        if let Some(lib) = loaded().lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(lib);
        }
        let build_err = |e: sim_build::BuildError| SimError::Build {
            top: top.name().to_string(),
            message: e.to_string(),
        };
        let recipe = sim_build::Recipe::from_json(top.recipe()).map_err(build_err)?;
        let extra: Vec<PathBuf> = top.companion().map(PathBuf::from).into_iter().collect();
        let path = sim_build::build_library(&recipe, &extra)
            .map_err(build_err)?
            .path;
        let handle = open(top.name(), &path)?;
        let factory = factory_in(top.name(), &path, handle, &recipe.factory_symbol())?;
        let lib = Library {
            top: top.name(),
            handle,
            path,
            factory,
        };
        if let Ok(mut m) = loaded().lock() {
            m.insert(key, lib.clone());
        }
        Ok(lib)
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The address of the exported symbol `name` (a companion's `sim_export_*` function).
    pub fn symbol(&self, name: &str) -> Result<*const c_void> {
        symbol_in(self.top, &self.path, self.handle, name)
    }
}

/// The model factory of `top`, from its library loaded once per process.
pub(crate) fn factory_of(top: TopDef) -> Result<RawFactory> {
    Ok(Library::of(top)?.factory)
}

fn symbol_in(top: &str, path: &Path, handle: usize, name: &str) -> Result<*const c_void> {
    let missing = |why: String| SimError::Build {
        top: top.to_string(),
        message: format!("{}: no symbol `{name}` ({why})", path.display()),
    };
    let c = CString::new(name).map_err(|e| missing(e.to_string()))?;
    // SAFETY: `handle` came from a successful dlopen that is never closed, and `c` is a
    // NUL-terminated string that lives across the call.
    let sym = unsafe { libc::dlsym(handle as *mut c_void, c.as_ptr()) };
    if sym.is_null() {
        return Err(missing(last_error()));
    }
    Ok(sym.cast_const())
}

fn factory_in(top: &str, path: &Path, handle: usize, symbol: &str) -> Result<RawFactory> {
    let sym = symbol_in(top, path, handle, symbol)?;
    // SAFETY: sim-build generates `sim_new_<package>__<top>` in every top's library with
    // exactly the signature of RawFactory (codegen.rs, glue_cpp).
    Ok(unsafe { std::mem::transmute::<*const c_void, RawFactory>(sym) })
}

fn open(top: &str, path: &Path) -> Result<usize> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|e| SimError::Build {
        top: top.to_string(),
        message: format!("{}: {e}", path.display()),
    })?;
    // SAFETY: `c` is a NUL-terminated path that lives across the call. The library was built
    // by sim-build: its initialisers only set up the Verilator runtime's statics, and
    // RTLD_LOCAL keeps its symbols out of every other library's way.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(SimError::Build {
            top: top.to_string(),
            message: format!("cannot load {}: {}", path.display(), last_error()),
        });
    }
    Ok(handle as usize)
}

fn last_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated string valid until the next dl* call on
    // this thread; it is copied at once.
    unsafe {
        let e = libc::dlerror();
        if e.is_null() {
            "no error reported".to_string()
        } else {
            std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
        }
    }
}

/// Builds every top of `tops` into the cache ahead of the tests that would build each on first
/// use (for CI, or before working offline), with a line on standard error per top; stops at
/// the first top that cannot be built.
pub fn build_tops(tops: &[TopDef]) -> Result<()> {
    for (i, top) in tops.iter().enumerate() {
        let start = std::time::Instant::now();
        let lib = Library::of(*top)?;
        eprintln!(
            "[{}/{}] {} in {:.1} s: {}",
            i + 1,
            tops.len(),
            top.name(),
            start.elapsed().as_secs_f64(),
            lib.path().display()
        );
    }
    Ok(())
}

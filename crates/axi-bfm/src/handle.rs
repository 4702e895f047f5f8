//! The one shape of every bus model's and monitor's handle: the core shared with the
//! environment, the clock it runs on, the bus's name, its idle flag and the protocol monitor
//! attached with it (none for a monitor's own handle).

use std::cell::{Ref, RefCell, RefMut};
use std::convert::Infallible;
use std::rc::Rc;

use sim_runtime::ClockId;

use crate::env::{Agent, Env, Idle, DEFAULT_TIMEOUT_CYCLES};
use crate::error::Result;

/// A bus model's handle on its core `C` (an agent of the environment) and its monitor `M`.
pub(crate) struct Handle<C, M> {
    core: Rc<RefCell<C>>,
    /// The core's idle flag, lowered by every change made through the handle.
    idle: Option<Idle>,
    /// The clock the core runs on.
    pub(crate) clock: ClockId,
    /// The bus's port prefix.
    pub(crate) bus: String,
    /// The cycle limit of blocking calls that take it from the handle.
    pub(crate) timeout: u64,
    monitor: Option<M>,
}

impl<C, M: Clone> Clone for Handle<C, M> {
    fn clone(&self) -> Self {
        Handle {
            core: self.core.clone(),
            idle: self.idle.clone(),
            clock: self.clock,
            bus: self.bus.clone(),
            timeout: self.timeout,
            monitor: self.monitor.clone(),
        }
    }
}

impl<C, M> std::fmt::Debug for Handle<C, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("bus", &self.bus)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

/// The handle of an agent that has no monitor of its own: a protocol monitor's.
pub(crate) type Bare<C> = Handle<C, Infallible>;

impl<C: Agent + 'static, M> Handle<C, M> {
    /// Adds `core` to the environment on `clock`, with the monitor `attach` makes for the bus
    /// `prefix` unless the environment's default monitors are off.
    pub(crate) fn attach(
        env: &mut Env,
        prefix: &str,
        clock: ClockId,
        core: C,
        attach: impl FnOnce(&mut Env, &str, ClockId) -> Result<M>,
    ) -> Result<Handle<C, M>> {
        let mut handle = Handle::add(env, prefix, clock, core);
        if env.monitors_enabled() {
            handle.monitor = Some(attach(env, prefix, clock)?);
        }
        Ok(handle)
    }

    /// Adds `core` to the environment on `clock`, without a monitor.
    fn add(env: &mut Env, prefix: &str, clock: ClockId, core: C) -> Handle<C, M> {
        let idle = core.idle().map(|(flag, _)| flag);
        let core = Rc::new(RefCell::new(core));
        env.add_agent(clock, core.clone());
        Handle {
            core,
            idle,
            clock,
            bus: prefix.to_string(),
            timeout: DEFAULT_TIMEOUT_CYCLES,
            monitor: None,
        }
    }
}

impl<C: Agent + 'static> Bare<C> {
    /// Adds `core`, a protocol monitor watching the bus `prefix`, to the environment on
    /// `clock`: a monitor watches the bus and has no monitor of its own.
    pub(crate) fn attach_bare(env: &mut Env, prefix: &str, clock: ClockId, core: C) -> Bare<C> {
        Handle::add(env, prefix, clock, core)
    }
}

impl<C, M> Handle<C, M> {
    /// The core, to look at.
    #[inline]
    pub(crate) fn core(&self) -> Ref<'_, C> {
        self.core.borrow()
    }

    /// The core, for a change that may give it work: the environment runs it again.
    #[inline]
    pub(crate) fn edit(&self) -> RefMut<'_, C> {
        if let Some(i) = &self.idle {
            i.set(false);
        }
        self.core.borrow_mut()
    }

    /// The protocol monitor attached with the model, if any.
    pub(crate) fn monitor(&self) -> Option<&M> {
        self.monitor.as_ref()
    }
}

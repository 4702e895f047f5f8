//! `cargo xtask codegen`: writes the Verilog include, the Rust constants and the documentation
//! of the register map from `hdl/regs.toml`, the one source of truth, and the protocol rules'
//! Rust list and formal property modules from `hdl/formal/rules.toml` (see [`crate::rule_table`]).

use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use crate::output::Output;

/// The table of registers, as `hdl/regs.toml` holds it.
pub const TABLE: &str = "hdl/regs.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    map: MapInfo,
    reg: Vec<Reg>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MapInfo {
    name: String,
    window: u32,
    #[serde(default)]
    notes: Vec<Note>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Note {
    title: String,
    text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reg {
    name: String,
    offset: u32,
    access: String,
    #[serde(default = "default_width")]
    width: u32,
    reset: u64,
    #[serde(default)]
    volatile: bool,
    doc: String,
    fields: Vec<Field>,
}

fn default_width() -> u32 {
    32
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Field {
    name: String,
    lsb: u32,
    bits: u32,
    doc: String,
    #[serde(default)]
    values: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Value {
    name: String,
    value: u64,
    doc: String,
}

impl Reg {
    /// The bits that fields cover.
    fn mask(&self) -> u64 {
        self.fields
            .iter()
            .fold(0, |m, f| m | (field_ones(f.bits) << f.lsb))
    }
}

fn field_ones(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Parses and checks the table, and renders every generated file.
pub fn render(root: &Path) -> Result<Vec<Output>, String> {
    let src = std::fs::read_to_string(root.join(TABLE))
        .map_err(|e| format!("cannot read {TABLE}: {e}"))?;
    let table: Table = toml::from_str(&src).map_err(|e| format!("{TABLE} is not valid: {e}"))?;
    validate(&table)?;
    let mut outputs = vec![
        Output {
            path: root.join("hdl/include/card_regs.vh"),
            text: verilog(&table),
        },
        Output {
            path: root.join("crates/card-regs/src/generated.rs"),
            text: rust(&table),
        },
        Output {
            path: root.join("docs/register-map.md"),
            text: markdown(&table),
        },
    ];
    outputs.extend(crate::rule_table::render(root)?);
    Ok(outputs)
}

/// Writes the generated files, or with `check` only compares them and fails when one is stale.
pub fn codegen(root: &Path, check: bool) -> Result<(), String> {
    let outputs = render(root)?;
    let mut stale = Vec::new();
    for out in &outputs {
        let current = std::fs::read_to_string(&out.path).unwrap_or_default();
        if current == out.text {
            continue;
        }
        let shown = out
            .path
            .strip_prefix(root)
            .unwrap_or(&out.path)
            .display()
            .to_string();
        if check {
            stale.push(shown);
        } else {
            if let Some(dir) = out.path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            std::fs::write(&out.path, &out.text)
                .map_err(|e| format!("cannot write {shown}: {e}"))?;
            println!("codegen: wrote {shown}");
        }
    }
    if stale.is_empty() {
        if check {
            println!(
                "codegen: {} generated files match {TABLE} and {}",
                outputs.len(),
                crate::rule_table::RULES
            );
        }
        Ok(())
    } else {
        Err(format!(
            "generated files are stale against {TABLE} or {}: {}; run `cargo xtask codegen`",
            crate::rule_table::RULES,
            stale.join(", ")
        ))
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn validate(t: &Table) -> Result<(), String> {
    if !t.map.window.is_power_of_two() || t.map.window < 16 {
        return Err(format!(
            "map.window {:#x} must be a power of two",
            t.map.window
        ));
    }
    let mut words: Vec<(u32, &str)> = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for r in &t.reg {
        let what = format!("register {}", r.name);
        if !is_ident(&r.name) {
            return Err(format!("{what}: name must be UPPER_SNAKE_CASE"));
        }
        if names.contains(&r.name.as_str()) {
            return Err(format!("{what}: name used twice"));
        }
        names.push(&r.name);
        if !["ro", "rw", "wo", "w1c"].contains(&r.access.as_str()) {
            return Err(format!("{what}: access `{}` is not ro/rw/wo/w1c", r.access));
        }
        if r.width != 32 && r.width != 64 {
            return Err(format!("{what}: width must be 32 or 64"));
        }
        if r.width == 64 && r.access != "ro" {
            return Err(format!(
                "{what}: 64-bit registers must be read-only counters"
            ));
        }
        let align = r.width / 8;
        if r.offset % align != 0 || r.offset + align > t.map.window {
            return Err(format!(
                "{what}: offset {:#x} must be {align}-byte aligned and inside the window",
                r.offset
            ));
        }
        for w in 0..r.width / 32 {
            let off = r.offset + 4 * w;
            if let Some((_, other)) = words.iter().find(|(o, _)| *o == off) {
                return Err(format!("{what}: offset {off:#x} overlaps {other}"));
            }
            words.push((off, &r.name));
        }
        if r.fields.is_empty() {
            return Err(format!("{what}: needs at least one field"));
        }
        let mut covered = 0u64;
        for f in &r.fields {
            if !is_ident(&f.name) || f.bits == 0 || f.lsb + f.bits > r.width {
                return Err(format!(
                    "{what}: field {} needs an UPPER_SNAKE_CASE name and must lie inside the register",
                    f.name
                ));
            }
            let m = field_ones(f.bits) << f.lsb;
            if covered & m != 0 {
                return Err(format!("{what}: field {} overlaps another field", f.name));
            }
            covered |= m;
            for v in &f.values {
                if !is_ident(&v.name) || v.value > field_ones(f.bits) {
                    return Err(format!(
                        "{what}: value {} of field {} must be a valid name and fit the field",
                        v.name, f.name
                    ));
                }
            }
        }
        if r.reset & !r.mask() != 0 {
            return Err(format!(
                "{what}: reset {:#x} sets bits outside the fields",
                r.reset
            ));
        }
        if r.access == "wo" && r.reset != 0 {
            return Err(format!(
                "{what}: a write-only register reads as zero, so reset must be 0"
            ));
        }
    }
    Ok(())
}

const HEADER_WARNING: &str = "Generated by `cargo xtask codegen` from hdl/regs.toml; do not edit.";

fn verilog(t: &Table) -> String {
    let window_bits = t.map.window.trailing_zeros();
    let digits = window_bits.div_ceil(4) as usize;
    let mut s = String::new();
    let _ = writeln!(s, "// {HEADER_WARNING}");
    let _ = writeln!(s, "//");
    let _ = writeln!(
        s,
        "// Register map of the {} user BAR, included inside a module body. Offsets are byte",
        t.map.name
    );
    let _ = writeln!(
        s,
        "// offsets within the {}-byte window that the BAR mirrors; REG_<name>_RESET is the value",
        t.map.window
    );
    let _ = writeln!(
        s,
        "// after reset, REG_<name>_MASK the bits that fields cover; a 64-bit register has a _LO"
    );
    let _ = writeln!(s, "// and a _HI word.");
    let _ = writeln!(s);
    let _ = writeln!(s, "localparam REGS_WINDOW_BITS = {window_bits};");
    for r in &t.reg {
        let _ = writeln!(s);
        let _ = writeln!(s, "// {} ({}): {}", r.name, r.access, r.doc);
        if r.width == 64 {
            for (i, half) in ["LO", "HI"].iter().enumerate() {
                let _ = writeln!(
                    s,
                    "localparam [{}:0] REG_{}_{half} = {window_bits}'h{:0digits$x};",
                    window_bits - 1,
                    r.name,
                    r.offset + 4 * i as u32
                );
            }
        } else {
            let _ = writeln!(
                s,
                "localparam [{}:0] REG_{} = {window_bits}'h{:0digits$x};",
                window_bits - 1,
                r.name,
                r.offset
            );
        }
        let _ = writeln!(
            s,
            "localparam [{}:0] REG_{}_RESET = {}'h{:x};",
            r.width - 1,
            r.name,
            r.width,
            r.reset
        );
        let _ = writeln!(
            s,
            "localparam [{}:0] REG_{}_MASK = {}'h{:x};",
            r.width - 1,
            r.name,
            r.width,
            r.mask()
        );
        for f in &r.fields {
            let _ = writeln!(s, "localparam REG_{}_{}_LSB = {};", r.name, f.name, f.lsb);
            let _ = writeln!(s, "localparam REG_{}_{}_BITS = {};", r.name, f.name, f.bits);
            for v in &f.values {
                let _ = writeln!(
                    s,
                    "localparam [{}:0] REG_{}_{}_{} = {}'d{};",
                    f.bits - 1,
                    r.name,
                    f.name,
                    v.name,
                    f.bits,
                    v.value
                );
            }
        }
    }
    s
}

fn rust_doc(s: &mut String, indent: &str, doc: &str) {
    let _ = writeln!(s, "{indent}/// {doc}");
}

fn rust(t: &Table) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "// {HEADER_WARNING}");
    let _ = writeln!(s);
    let _ = writeln!(s, "use crate::{{Access, Field, Register}};");
    let _ = writeln!(s);
    let _ = writeln!(s, "/// Bytes of the decoded window; the BAR mirrors it.");
    let _ = writeln!(s, "pub const WINDOW: u32 = {:#x};", t.map.window);
    for r in &t.reg {
        let _ = writeln!(s);
        rust_doc(&mut s, "", &format!("{} ({}): {}", r.name, r.access, r.doc));
        if r.width == 64 {
            let _ = writeln!(s, "pub const {}: u32 = {:#05x};", r.name, r.offset);
            rust_doc(&mut s, "", &format!("Low word of {}.", r.name));
            let _ = writeln!(s, "pub const {}_LO: u32 = {:#05x};", r.name, r.offset);
            rust_doc(
                &mut s,
                "",
                &format!(
                    "High word of {} (latched by a read of the low word).",
                    r.name
                ),
            );
            let _ = writeln!(s, "pub const {}_HI: u32 = {:#05x};", r.name, r.offset + 4);
        } else {
            let _ = writeln!(s, "pub const {}: u32 = {:#05x};", r.name, r.offset);
        }
        let _ = writeln!(s, "/// Fields and values of {}.", r.name);
        let _ = writeln!(s, "pub mod {} {{", r.name.to_ascii_lowercase());
        let _ = writeln!(s, "    /// Value after reset.");
        let _ = writeln!(s, "    pub const RESET: u64 = {:#x};", r.reset);
        let _ = writeln!(s, "    /// Bits that fields cover.");
        let _ = writeln!(s, "    pub const MASK: u64 = {:#x};", r.mask());
        for f in &r.fields {
            rust_doc(
                &mut s,
                "    ",
                &format!("{}: lowest bit. {}", f.name, f.doc),
            );
            let _ = writeln!(s, "    pub const {}_LSB: u32 = {};", f.name, f.lsb);
            rust_doc(&mut s, "    ", &format!("{}: width in bits.", f.name));
            let _ = writeln!(s, "    pub const {}_BITS: u32 = {};", f.name, f.bits);
            rust_doc(&mut s, "    ", &format!("{}: mask in place.", f.name));
            let _ = writeln!(
                s,
                "    pub const {}_MASK: u64 = {:#x};",
                f.name,
                field_ones(f.bits) << f.lsb
            );
            for v in &f.values {
                rust_doc(
                    &mut s,
                    "    ",
                    &format!("{} = {}: {}", f.name, v.name, v.doc),
                );
                let _ = writeln!(s, "    pub const {}_{}: u64 = {};", f.name, v.name, v.value);
            }
        }
        let _ = writeln!(s, "}}");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "/// Every register of the map, in offset order of the table."
    );
    let _ = writeln!(s, "pub const REGISTERS: &[Register] = &[");
    for r in &t.reg {
        let access = match r.access.as_str() {
            "ro" => "ReadOnly",
            "rw" => "ReadWrite",
            "wo" => "WriteOnly",
            _ => "WriteOneToClear",
        };
        let _ = writeln!(s, "    Register {{");
        let _ = writeln!(s, "        name: {:?},", r.name);
        let _ = writeln!(s, "        offset: {:#05x},", r.offset);
        let _ = writeln!(s, "        width: {},", r.width);
        let _ = writeln!(s, "        access: Access::{access},");
        let _ = writeln!(s, "        reset: {:#x},", r.reset);
        let _ = writeln!(s, "        mask: {:#x},", r.mask());
        let _ = writeln!(s, "        volatile: {},", r.volatile);
        let _ = writeln!(s, "        doc: {:?},", r.doc);
        let _ = writeln!(s, "        fields: &[");
        for f in &r.fields {
            let _ = writeln!(
                s,
                "            Field {{ name: {:?}, lsb: {}, bits: {}, doc: {:?} }},",
                f.name, f.lsb, f.bits, f.doc
            );
        }
        let _ = writeln!(s, "        ],");
        let _ = writeln!(s, "    }},");
    }
    let _ = writeln!(s, "];");
    s
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn markdown(t: &Table) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Register map of the {} user BAR", t.map.name);
    let _ = writeln!(s);
    let _ = writeln!(s, "<!-- {HEADER_WARNING} -->");
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "The user BAR is an AXI4-Lite slave of 32-bit words. The map below is decoded in a \
         {}-byte window that repeats across the BAR; offsets outside every register read as zero \
         and ignore writes. Every access returns OKAY.",
        t.map.window
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "Access: `ro` read-only, `rw` read/write, `wo` write-only action (reads as zero), `w1c` write 1 to clear a bit. Bits that no field covers read as zero and ignore writes.");
    let _ = writeln!(s);
    let _ = writeln!(s, "**64-bit counters** are read as two words, the low word at the register's offset and the high word at offset + 4. Reading the low word latches the high word (one latch per register); the next read of the high word returns the latched value. Read low then high and the pair is one consistent sample even while the counter runs. A high-word read that no low-word read preceded returns the high word as latched by the last low-word read (zero after reset).");
    let _ = writeln!(s);
    for n in &t.map.notes {
        let _ = writeln!(s, "## {}", n.title);
        let _ = writeln!(s);
        let _ = writeln!(s, "{}", n.text.trim());
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Summary");
    let _ = writeln!(s);
    let _ = writeln!(s, "| offset | name | access | width | reset | meaning |");
    let _ = writeln!(s, "| --- | --- | --- | --- | --- | --- |");
    for r in &t.reg {
        let _ = writeln!(
            s,
            "| `{:#05x}` | [{}](#{}) | {} | {} | `{:#x}` | {} |",
            r.offset,
            r.name,
            r.name.to_ascii_lowercase(),
            r.access,
            r.width,
            r.reset,
            md_cell(&r.doc)
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## Registers");
    for r in &t.reg {
        let _ = writeln!(s);
        let _ = writeln!(s, "### {}", r.name);
        let _ = writeln!(s);
        let words = if r.width == 64 {
            format!(
                "`{:#05x}` (low word), `{:#05x}` (high word)",
                r.offset,
                r.offset + 4
            )
        } else {
            format!("`{:#05x}`", r.offset)
        };
        let _ = writeln!(
            s,
            "Offset {words}, access `{}`, {} bits, reset `{:#x}`{}.",
            r.access,
            r.width,
            r.reset,
            if r.volatile {
                ", changed by hardware"
            } else {
                ""
            }
        );
        let _ = writeln!(s);
        let _ = writeln!(s, "{}", r.doc);
        let _ = writeln!(s);
        let _ = writeln!(s, "| bits | field | meaning |");
        let _ = writeln!(s, "| --- | --- | --- |");
        for f in &r.fields {
            let bits = if f.bits == 1 {
                format!("{}", f.lsb)
            } else {
                format!("{}:{}", f.lsb + f.bits - 1, f.lsb)
            };
            let mut meaning = md_cell(&f.doc);
            for v in &f.values {
                let _ = write!(meaning, " `{}` = {}: {}", v.value, v.name, md_cell(&v.doc));
            }
            let _ = writeln!(s, "| {bits} | {} | {meaning} |", f.name);
        }
    }
    s
}

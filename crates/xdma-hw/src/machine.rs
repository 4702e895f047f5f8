//! Whether the system is a virtual machine, for programs that print times.

/// What the system says of itself when it is a virtual machine (the firmware's vendor and
/// product, `/sys/class/dmi/id/sys_vendor` and `product_name`), or `None` on bare metal. Times
/// taken in a virtual machine measure the hypervisor's path (under QEMU's TCG, its emulator)
/// as well as the card, so a program that prints times says so.
pub fn virtual_machine() -> Option<String> {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/sys/class/dmi/id/{f}"))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let vendor = read("sys_vendor").unwrap_or_default();
    let product = read("product_name").unwrap_or_default();
    const KNOWN: &[&str] = &[
        "QEMU",
        "KVM",
        "VMware",
        "VirtualBox",
        "innotek",
        "Xen",
        "Bochs",
    ];
    let hit = |s: &str| KNOWN.iter().any(|k| s.contains(k));
    (hit(&vendor) || hit(&product)).then(|| format!("{vendor} {product}").trim().to_string())
}

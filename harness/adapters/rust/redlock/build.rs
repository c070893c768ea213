// init_ok names the version of redlock that harness/adapters/rust/Cargo.lock pins:
// a dependency's version is not known to the binary otherwise.
fn main() {
    println!("cargo:rerun-if-changed=../Cargo.lock");
    let lock = std::fs::read_to_string("../Cargo.lock").unwrap_or_default();
    let version = lock
        .split("[[package]]")
        .find(|entry| entry.contains("\nname = \"redlock\"\n"))
        .and_then(|entry| entry.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"'))
        .unwrap_or("unknown");
    println!("cargo:rustc-env=LIBRARY_VERSION={version}");
}

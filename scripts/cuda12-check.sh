#!/usr/bin/env bash
# cuda12-check.sh [WORK_DIR]: builds the course with CUDA 12.4, the oldest toolkit it
# supports, and runs the CPU tests. The toolkit comes from Debian's nvidia-cuda-toolkit
# 12.4 packages (trixie), fetched with an apt configuration of its own under WORK_DIR
# (default build-cuda12; the system's apt setup is not touched: ~1.3 GB of packages,
# 3.2 GB unpacked, kept for the next run) and laid out as a toolkit. Every lesson is
# compiled for sm_75, 80, 86, 89 and 90 (12.4 knows no sm_100 or sm_120); a compiler
# warning fails the check as an error does. Exit 0: built without warnings and every
# CPU test passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(realpath -m "${1:-$root/build-cuda12}")
apt_dir=$work/apt debs=$work/debs unpacked=$work/unpacked cuda=$work/cuda-12.4 build=$work/build
mkdir -p "$apt_dir"/{lists/partial,cache/archives/partial,etc/sources.list.d,etc/preferences.d} "$debs"

if [ ! -x "$cuda/bin/nvcc" ]; then
    touch "$apt_dir/status"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
        "http://deb.debian.org/debian trixie main contrib non-free" >"$apt_dir/etc/sources.list"
    cat >"$apt_dir/apt.conf" <<CONF
Dir::Etc::SourceList "$apt_dir/etc/sources.list";
Dir::Etc::SourceParts "$apt_dir/etc/sources.list.d";
Dir::Etc::Preferences "$apt_dir/etc/preferences";
Dir::Etc::PreferencesParts "$apt_dir/etc/preferences.d";
Dir::State::Lists "$apt_dir/lists";
Dir::State::status "$apt_dir/status";
Dir::Cache "$apt_dir/cache";
Dir::Cache::archives "$apt_dir/cache/archives";
APT::Architectures { "amd64"; };
CONF
    export APT_CONFIG=$apt_dir/apt.conf
    if ! ls "$debs"/nvidia-cuda-toolkit_*.deb >/dev/null 2>&1; then
        apt-get update -q
        (cd "$debs" && apt-get download -q nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 \
            libnvvm4 libcublas12 libcublaslt12 libcu++-dev libcub-dev libthrust-dev)
    fi
    rm -rf "$unpacked"
    for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$unpacked"; done

    # Debian spreads the toolkit over /usr; nvcc wants one folder. Its /usr/bin/nvcc is
    # a shell wrapper: take the program itself.
    k=$unpacked/usr/lib/nvidia-cuda-toolkit
    rm -rf "$cuda"
    mkdir -p "$cuda"/{bin/crt,nvvm/bin,nvvm/lib64,lib64,include}
    cp -a "$k/bin/nvcc" "$cuda/bin/"
    for t in cudafe++ fatbinary nvlink ptxas bin2c cuobjdump nvdisasm nvprune cu++filt; do
        cp -a "$unpacked/usr/bin/$t" "$cuda/bin/"
    done
    cp -a "$k/bin/crt/link.stub" "$k/bin/crt/prelink.stub" "$cuda/bin/crt/"
    cp -a "$k/bin/cicc" "$cuda/nvvm/bin/"
    cp -a "$k/libdevice" "$cuda/nvvm/libdevice"
    cp -a "$unpacked"/usr/lib/x86_64-linux-gnu/libnvvm.so* "$cuda/nvvm/lib64/"
    cp -a "$unpacked"/usr/include/. "$cuda/include/"
    cp -a "$unpacked"/usr/lib/x86_64-linux-gnu/. "$cuda/lib64/"
    rm -f "$cuda"/lib64/libnvvm.so*
    cat >"$cuda/bin/nvcc.profile" <<'PROFILE'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
PROFILE
    rm -rf "$unpacked"
fi
"$cuda/bin/nvcc" --version | tail -n 2

python=$("$root/scripts/python-env.sh")
cmake -S "$root" -B "$build" -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" \
    -DCUDAToolkit_ROOT="$cuda" "-DCMAKE_CUDA_ARCHITECTURES=75;80;86;89;90" \
    -DCONV_PYTHON="$python"
cmake --build "$build" --clean-first -j "$(nproc)" 2>&1 | tee "$work/build.log"
if grep -qiE "warning" "$work/build.log"; then
    echo "cuda12-check: the build with CUDA 12.4 warns (see $work/build.log)" >&2
    exit 1
fi
ctest --test-dir "$build" -L cpu --output-on-failure -j "$(nproc)"
echo "cuda12-check: CUDA 12.4 builds every lesson without warnings; the CPU tests pass"

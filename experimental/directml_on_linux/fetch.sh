#!/usr/bin/env bash
# Fetch what the DirectML-on-Linux experiment needs; nothing here is committed.
#
#   fetch.sh                 libdirectml.so (from the torch-directml manylinux wheel on PyPI)
#                            into $DMLX_CACHE (default ~/.cache/dmlx)
#   fetch.sh --vkd3d-new     also Debian unstable's vkd3d 2.x (+ its glibc 2.43) as .debs,
#                            extracted into $DMLX_CACHE/vkd3d-new/root (private prefix, run
#                            through that prefix's ld-linux; the system is left alone)
#   fetch.sh --device        also lay out the repo's .gl/ and .dmlx/ (for the vkd3d 1.2/2.1 history runs)
#                            (both git-ignored via .git/info/exclude; carry=[".gl", ".dmlx"])
#   fetch.sh --proton        also lay out what run_proton.sh needs from registries in the repo's
#                            .dmlx-proton/ (git-ignored): libdirectml.so.xz and Debian's
#                            directx-headers-dev .deb. Its lib/ and include/ come from a
#                            vkd3d-proton build (docs/directml-on-linux.md); nothing here builds it.
# Local system packages (Debian bookworm, for the lavapipe run and the pytest):
#   apt-get install libvkd3d1 libvkd3d-utils1 libvkd3d-dev directx-headers-dev mesa-vulkan-drivers
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# The repository's own exclude file (shared by all its worktrees).
EXCLUDE=$(cd "$REPO" && realpath -m "$(git rev-parse --git-path info/exclude 2>/dev/null || echo .git/info/exclude)")
ignore() { mkdir -p "$(dirname "$EXCLUDE")"; grep -qx "$1" "$EXCLUDE" 2>/dev/null || echo "$1" >> "$EXCLUDE"; }
CACHE=${DMLX_CACHE:-$HOME/.cache/dmlx}
WHEEL_SPEC=${DMLX_WHEEL:-torch-directml==0.2.5.dev240914}
VKD3D_NEW=0
DEVICE=0
PROTON=0
for a in "$@"; do
  case "$a" in
    --vkd3d-new) VKD3D_NEW=1 ;;
    --device) DEVICE=1; VKD3D_NEW=1 ;;
    --proton) PROTON=1 ;;
    *) echo "usage: $0 [--vkd3d-new] [--device] [--proton]" >&2; exit 2 ;;
  esac
done
mkdir -p "$CACHE"

# 1. libdirectml.so from the torch-directml wheel (it also ships libd3d12.so /
#    libdxcore.so, but those are WSL link stubs with no implementation).
if [ ! -s "$CACHE/libdirectml.so" ]; then
  tmp=$(mktemp -d)
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.11 \
      --platform manylinux2010_x86_64 "$WHEEL_SPEC" -d "$tmp" >&2
  whl=$(ls "$tmp"/*.whl | head -1)
  python3 - "$whl" "$CACHE/libdirectml.so" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    name = next(n for n in z.namelist() if n.endswith("/libdirectml.so"))
    with z.open(name) as src, open(sys.argv[2], "wb") as dst:
        dst.write(src.read())
EOF
  basename "$whl" > "$CACHE/libdirectml.source"
  rm -rf "$tmp"
fi
echo "libdirectml.so: $CACHE/libdirectml.so ($(stat -c %s "$CACHE/libdirectml.so") bytes, from $(cat "$CACHE/libdirectml.source" 2>/dev/null))"

# apt-get against a private list directory (does not touch the system's sources).
apt_private() {  # apt_private STATE_DIR SUITE... -- apt-get args
  local st=$1; shift
  local suites=()
  while [ "$1" != "--" ]; do suites+=("$1"); shift; done
  shift
  mkdir -p "$st/lists/partial" "$st/cache/archives/partial"
  : > "$st/sources.list"
  for s in "${suites[@]}"; do
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $s main" >> "$st/sources.list"
  done
  local o=(-oDir::Etc::SourceList="$st/sources.list" -oDir::Etc::SourceParts=/dev/null
           -oDir::State::Lists="$st/lists" -oDir::Cache="$st/cache"
           -oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oAPT::Sandbox::User=root)
  [ -s "$st/lists/.updated" ] || { apt-get "${o[@]}" update >&2 && date > "$st/lists/.updated"; }
  apt-get "${o[@]}" "$@"
}

# 2. vkd3d 2.x (DXIL support) from Debian unstable, with the glibc it needs.
if [ "$VKD3D_NEW" = 1 ]; then
  NEW=$CACHE/vkd3d-new
  mkdir -p "$NEW/debs" "$NEW/root"
  if ! ls "$NEW"/debs/libvkd3d1_*.deb >/dev/null 2>&1; then
    (cd "$NEW/debs" && apt_private "$NEW/apt" sid -- download \
        libvkd3d1 libvkd3d-shader1 libvkd3d-utils1 libvkd3d-headers libc6 >&2)
  fi
  for f in "$NEW"/debs/*.deb; do dpkg -x "$f" "$NEW/root"; done
  echo "vkd3d-new: $(ls "$NEW"/debs) -> $NEW/root"
fi

xz_libdirectml() {  # xz_libdirectml DEST: the library compressed for carrying (33.7 MB -> 22.8 MB)
  python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.compress(open(sys.argv[1],'rb').read(), preset=6))" \
      "$CACHE/libdirectml.so" "$1"
}

# 3. Device layout: .gl/ (system .debs dpkg -x'd to / there) and .dmlx/ (private files).
if [ "$DEVICE" = 1 ]; then
  ignore /.gl/
  ignore /.dmlx/
  mkdir -p "$REPO/.gl" "$REPO/.dmlx/vkd3d-new"
  (cd "$REPO/.gl" && apt_private "$CACHE/apt-bookworm" bookworm -- download \
      libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 \
      libvkd3d1 libvkd3d-shader1 libvkd3d-utils1 directx-headers-dev >&2)
  cp "$CACHE"/vkd3d-new/debs/*.deb "$REPO/.dmlx/vkd3d-new/"
  xz_libdirectml "$REPO/.dmlx/libdirectml.so.xz"
  du -sh "$REPO/.gl" "$REPO/.dmlx"
fi

# 4. .dmlx-proton/: the registry-sourced part of run_proton.sh's inputs.
if [ "$PROTON" = 1 ]; then
  ignore /.dmlx-proton/
  mkdir -p "$REPO/.dmlx-proton"
  [ -s "$REPO/.dmlx-proton/libdirectml.so.xz" ] || xz_libdirectml "$REPO/.dmlx-proton/libdirectml.so.xz"
  ls "$REPO"/.dmlx-proton/directx-headers-dev_*.deb >/dev/null 2>&1 || (cd "$REPO/.dmlx-proton" \
      && apt_private "$CACHE/apt-bookworm" bookworm -- download directx-headers-dev >&2)
  [ -f "$REPO/.dmlx-proton/lib/libvkd3d-proton-d3d12.so" ] || echo "still needed: .dmlx-proton/lib and include/ from a vkd3d-proton build"
  du -sh "$REPO/.dmlx-proton"
fi

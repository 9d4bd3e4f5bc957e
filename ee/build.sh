#!/usr/bin/env bash
# Build the execution environment image from execution-environment.yml (`make ee`).
#
#   1. base image (only when podman does not have it): a Debian root made with debootstrap, cached under
#      ~/.cache/dbfleet-lab/ee/ and reused by every clone on the machine, imported with
#      `tar -C ROOT -c . | podman import - $EE_BASE_IMAGE`. Skipped when EE_BASE_IMAGE is not localhost/...:
#      then it is your registry's EE base, pulled by podman (see docs/awx.md).
#   2. build context inputs (gitignored, under ee/):
#        ee/ca/extra-ca.crt   the CA bundle pip trusts inside the build (PIP_CERT), EE_CA_BUNDLE
#                             (default: the machine's bundle, which holds a company proxy's CA when there is one)
#        ee/source/           a bare clone of this checkout's HEAD under the branch collections/requirements.yml
#                             names, and a git config redirecting that URL to it: the build installs the
#                             collection with the project's own `ansible-galaxy collection install -r
#                             collections/requirements.yml`, as a project sync does, from this commit.
#   3. ansible-builder build --container-runtime podman, podman configured by ee/containers.conf
#      (CONTAINERS_CONF: runc, ulimits), the build on the host network.
# Prints the build time and the image size; the last line is the image name.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export CONTAINERS_CONF="$ROOT/ee/containers.conf"
EE_IMAGE=${EE_IMAGE:-localhost/dbfleet-innodb-ee:1.0.0}
EE_BASE_IMAGE=${EE_BASE_IMAGE:-$(sed -n 's/^ *name: *\(localhost\/dbfleet-ee-base:[^ ]*\).*/\1/p' execution-environment.yml | head -1)}
EE_BASE_SUITE=${EE_BASE_SUITE:-bookworm}
EE_CA_BUNDLE=${EE_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
CACHE=${DBFLEET_LAB_CACHE:-$HOME/.cache/dbfleet-lab}/ee
MIRROR=${EE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What the base holds: the Python the EE definition names (Debian 12: 3.11), pip and venv for ansible-builder's
# scripts, git for installing the collection from its git source, the CA certificates.
BASE_PACKAGES=python3,python3-pip,python3-venv,git,ca-certificates
BUILDER=${BUILDER:-$ROOT/.venv/bin/ansible-builder}

for tool in podman runc; do
  command -v "$tool" >/dev/null || { echo "ERROR: $tool is missing (Debian package $tool; \`make ee\` installs it)" >&2; exit 1; }
done
started=$SECONDS

# ------------------------------------------------------------------ 1. base image
if [ -z "$EE_BASE_IMAGE" ]; then
  echo "ERROR: execution-environment.yml names no localhost/dbfleet-ee-base:TAG base image and EE_BASE_IMAGE is not set" >&2
  exit 1
fi
if [[ "$EE_BASE_IMAGE" != localhost/* ]]; then
  echo "base image $EE_BASE_IMAGE: from its registry"
elif podman image exists "$EE_BASE_IMAGE"; then
  echo "base image $EE_BASE_IMAGE: present"
else
  root="$CACHE/base-$EE_BASE_SUITE"
  if [ ! -d "$root" ]; then
    command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] \
      || { echo "ERROR: debootstrap is missing (Debian package debootstrap)" >&2; exit 1; }
    mkdir -p "$CACHE"
    tmp=$(mktemp -d "$CACHE/.base-$EE_BASE_SUITE-XXXXXX")
    trap 'for m in "$tmp"/proc "$tmp"/sys; do umount -l "$m" 2>/dev/null || true; done; rm -rf --one-file-system "$tmp"' EXIT
    echo "base root: debootstrap $EE_BASE_SUITE into $root (first time on this machine; log $CACHE/base-$EE_BASE_SUITE.log)"
    t=$SECONDS
    /usr/sbin/debootstrap --variant=minbase --include="$BASE_PACKAGES" "$EE_BASE_SUITE" "$tmp" "$MIRROR" \
      > "$CACHE/base-$EE_BASE_SUITE.log" 2>&1 || { tail -20 "$CACHE/base-$EE_BASE_SUITE.log" >&2; exit 1; }
    # The package manager ansible-builder's scripts call (options.package_manager_path): apt behind
    # the dnf-style commands they use ("install -y PKGS", "clean all").
    cat > "$tmp/usr/local/sbin/ee-apt" <<'EOF'
#!/bin/sh
# dnf-style front end to apt for ansible-builder's install-from-bindep / assemble scripts.
set -e
export DEBIAN_FRONTEND=noninteractive
case "$1" in
  install) shift; [ "$1" = -y ] && shift
           apt-get -o Acquire::Check-Valid-Until=false -q update
           exec apt-get install -y -q --no-install-recommends "$@" ;;
  clean)   apt-get clean; exec rm -rf /var/lib/apt/lists/* ;;
  *)       exec apt-get "$@" ;;
esac
EOF
    chmod 755 "$tmp/usr/local/sbin/ee-apt"
    chroot "$tmp" apt-get clean
    rm -rf "$tmp"/var/lib/apt/lists/* "$tmp"/var/cache/apt/*.bin "$tmp"/var/log/*.log "$tmp"/usr/share/doc/* "$tmp"/usr/share/man/*
    chmod 755 "$tmp"
    mv "$tmp" "$root"
    trap - EXIT
    echo "base root ready in $((SECONDS - t)) s"
  fi
  t=$SECONDS
  tar -C "$root" -c . | podman import -q --change 'CMD ["/bin/bash"]' - "$EE_BASE_IMAGE" >/dev/null
  echo "base image $EE_BASE_IMAGE imported in $((SECONDS - t)) s"
fi

# ------------------------------------------------------------------ 2. build context inputs
mkdir -p ee/ca
if [ -n "$EE_CA_BUNDLE" ]; then
  [ -r "$EE_CA_BUNDLE" ] || { echo "ERROR: EE_CA_BUNDLE $EE_CA_BUNDLE is not a readable file" >&2; exit 1; }
  cp "$EE_CA_BUNDLE" ee/ca/extra-ca.crt
else
  rm -f ee/ca/extra-ca.crt
fi
branch=$(python3 -c 'import yaml,sys; print(yaml.safe_load(open("collections/requirements.yml"))["collections"][0]["version"])' 2>/dev/null \
         || sed -n 's/^ *version: *//p' collections/requirements.yml | head -1)
url=$(sed -n 's/^ *- name: *//p' collections/requirements.yml | head -1)
head=$(git rev-parse HEAD)
rm -rf ee/source/innodb.git ee/source/gitconfig
git clone -q --bare "$ROOT" ee/source/innodb.git
git -C ee/source/innodb.git update-ref "refs/heads/$branch" "$head"
printf '[url "file:///usr/share/dbfleet-ee-source/innodb.git"]\n\tinsteadOf = %s\n[safe]\n\tdirectory = *\n' "$url" > ee/source/gitconfig
echo "collection source: $url at $branch = $head"

# ------------------------------------------------------------------ 3. ansible-builder
t=$SECONDS
"$BUILDER" build -f execution-environment.yml -c .build/ee --container-runtime podman -t "$EE_IMAGE" \
  --build-arg EE_BASE_IMAGE="$EE_BASE_IMAGE" --build-arg DBFLEET_COLLECTION_COMMIT="$head" --extra-build-cli-args "--network host" -v 2
echo "image $EE_IMAGE built in $((SECONDS - t)) s (make ee: $((SECONDS - started)) s in all)"
podman image inspect --format 'image size: {{.Size}} bytes' "$EE_IMAGE"
echo "$EE_IMAGE"

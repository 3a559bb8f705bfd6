"""The cache model's profiles as the host reads them (the same format as
cachemodel/profile.c reads, cachemodel/profiles.txt): one profile's keys,
and the kernel options that tell a run which caches it models.

Python 3 standard library only.
"""

from tools.model.model_lines import ModelError

LEVEL_KEYS = ("l1d", "l2", "llc")


def read_profile(path, name):
    prof, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                cur = line.strip("[]")
                continue
            if cur != name:
                continue
            key, *vals = line.split()
            vals = [int(v, 0) for v in vals]
            prof[key] = vals if key in LEVEL_KEYS else vals[0]
    if not prof:
        raise ModelError("%s: no profile %r" % (path, name))
    return prof


def kernel_options(path, name):
    """The kernel command-line options for a run under profile name:
    cachemodel=NAME and cachemodel.caches=, the profile's cache geometry
    (lib/cache_geometry.h: levels that exist, LEVEL:BYTES:WAYS). The
    profile file stays the one home of these numbers. Raises ModelError
    for an unknown profile or one without the levels."""
    prof = read_profile(path, name)
    levels = []
    for key in LEVEL_KEYS:
        if key not in prof or len(prof[key]) < 2:
            raise ModelError("%s: profile %r has no %s line" %
                             (path, name, key))
        size, ways = prof[key][0], prof[key][1]
        if size:
            levels.append("%s:%d:%d" % (key, size, ways))
    return "cachemodel=%s cachemodel.caches=%s" % (name, ",".join(levels))

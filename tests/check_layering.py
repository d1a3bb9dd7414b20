#!/usr/bin/env python3
"""Checks that no layer includes a layer above it (docs/architecture.md, "Layers").

Reads every `#include "podsim/<layer>/..."` in src/<layer>/ and include/podsim/<layer>/ and fails, naming the
file, the line and both layers, when a file includes a layer it may not see. Within workload/, the shared
base may not include a kind, the transformer kind may use only the base, the other kinds (wafer, moe, ps)
may use the base and the transformer kind but not each other, and src/workload/registry.cpp (the kind ->
factory table) sees every kind.

Usage: check_layering.py [REPO_ROOT]       check the tree (default: this script's repository)
       check_layering.py --self-test      check that violations planted in a scratch tree are reported
"""

import os
import re
import sys
import tempfile

# Each layer and the layers it may include (besides itself), bottom up. The engine replays plans on
# topologies and must not know workloads or the network layer's collectives; report uses engine results
# together with the workload's step plan.
BELOW = {
    "core": [],
    "calibration": ["core"],
    "topology": ["calibration", "core"],
    "plan": ["topology", "calibration", "core"],
    "network": ["plan", "topology", "calibration", "core"],
    "workload": ["network", "plan", "topology", "calibration", "core"],
    "engine": ["plan", "topology", "calibration", "core"],
    # Failures, checkpoints and goodput: closed forms and Monte Carlo over a step time; sees only core.
    "reliability": ["core"],
    "report": ["reliability", "engine", "workload", "network", "plan", "topology", "calibration", "core"],
    "study": ["report", "reliability", "engine", "workload", "network", "plan", "topology", "calibration", "core"],
    # Calibration fits and nccl-tests import: on the network layer, beside workload and the layers above it.
    "fit": ["network", "plan", "topology", "calibration", "core"],
    "driver": ["study", "fit", "report", "reliability", "engine", "workload", "network", "plan", "topology", "calibration",
               "core"],
    "cli": ["driver", "study", "fit", "report", "reliability", "engine", "workload", "network", "plan", "topology",
            "calibration", "core"],
}

# Inside workload/: the folder of each kind and what it may see of workload/ (besides itself).
WORKLOAD_KINDS = {
    "transformer": ["base"],
    "wafer": ["base", "transformer"],
    "moe": ["base", "transformer"],
    "ps": ["base", "transformer"],
}
REGISTRY = "src/workload/registry.cpp"  # the one file that sees every kind

INCLUDE = re.compile(r'^\s*#\s*include\s*"podsim/([^"/]+)/([^"]*)"')
# SimGrid is the engine's business: only its .cpp files include it, so that no public header (and no layer
# above, e.g. report reading ReplayResult) needs SimGrid's headers.
SIMGRID = re.compile(r'^\s*#\s*include\s*[<"](simgrid/|xbt/|xbt\.h|simgrid\.h)')


def workload_part(rel_in_workload):
    """'moe/gshard_math.hpp' -> 'moe'; 'step_plan.hpp' -> 'base'."""
    head = rel_in_workload.split("/", 1)[0]
    return head if "/" in rel_in_workload and head in WORKLOAD_KINDS else "base"


def unit_of(path):
    """(layer, workload part or None) of a file under src/<layer>/ or include/podsim/<layer>/."""
    for root in ("src/", "include/podsim/"):
        if path.startswith(root):
            rest = path[len(root):]
            layer = rest.split("/", 1)[0]
            part = workload_part(rest.split("/", 1)[1]) if layer == "workload" and "/" in rest else None
            return layer, part
    return None, None


def check_include(path, layer, part, inc_layer, inc_rest):
    """None when allowed, else why not."""
    if inc_layer not in BELOW:
        return f"includes layer '{inc_layer}', which does not exist (layers: {', '.join(BELOW)})"
    if inc_layer != layer:
        if inc_layer in BELOW[layer]:
            return None
        if layer in BELOW[inc_layer]:
            return f"layer '{layer}' includes layer '{inc_layer}', which is above it"
        return (f"layer '{layer}' includes layer '{inc_layer}'; they are at the same level and may not see "
                f"each other ('{layer}' may use: {', '.join(BELOW[layer]) or 'nothing'})")
    if layer != "workload" or path == REGISTRY:
        return None
    inc_part = workload_part(inc_rest)
    if inc_part == part:
        return None
    if part == "base":
        return (f"workload base includes workload kind '{inc_part}': the base may not depend on a kind "
                f"(register kinds in {REGISTRY})")
    if inc_part in WORKLOAD_KINDS[part]:
        return None
    if inc_part != "base" and part in WORKLOAD_KINDS[inc_part]:
        return f"workload kind '{part}' includes workload kind '{inc_part}', which is above it"
    return (f"workload kinds '{part}' and '{inc_part}' are at the same level and may not see each other "
            f"('{part}' may use: workload base, {', '.join(k for k in WORKLOAD_KINDS[part] if k != 'base')})")


def check_tree(root):
    problems = []
    for top in ("src", "include/podsim"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".hpp", ".h", ".cc")):
                    continue
                full = os.path.join(dirpath, name)
                path = os.path.relpath(full, root).replace(os.sep, "/")
                layer, part = unit_of(path)
                if layer is None:
                    continue
                if layer not in BELOW:
                    problems.append(f"{path}: directory of unknown layer '{layer}' (layers: {', '.join(BELOW)})")
                    continue
                with open(full, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if SIMGRID.match(line) and not (path.startswith("src/engine/") and path.endswith(".cpp")):
                            problems.append(f"{path}:{number}: layer '{layer}' includes SimGrid, which only "
                                            f"src/engine/*.cpp may include ({line.strip()})")
                            continue
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        why = check_include(path, layer, part, m.group(1), m.group(2))
                        if why:
                            problems.append(f"{path}:{number}: {why} (#include \"podsim/{m.group(1)}/{m.group(2)}\")")
    return sorted(problems)


def self_test():
    planted = {
        "src/engine/bad.cpp": '#include "podsim/plan/task_graph.hpp"\n#include "podsim/workload/step_plan.hpp"\n',
        "include/podsim/core/bad.hpp": '#include "podsim/topology/topology.hpp"\n',
        "src/network/bad.cpp": '#include "podsim/engine/replay.hpp"\n',
        "include/podsim/engine/bad.hpp": '#include <simgrid/s4u.hpp>\n',
        "src/engine/ok.cpp": '#include <simgrid/s4u.hpp>\n#include "podsim/plan/task_graph.hpp"\n',
        "src/workload/moe/bad.cpp": '#include "podsim/workload/transformer/layer_ops.hpp"\n'
                                    '#include "podsim/workload/ps/zipf_keys.hpp"\n',
        "include/podsim/workload/bad.hpp": '#include "podsim/workload/wafer/wafer_step.hpp"\n',
        "src/workload/transformer/bad.cpp": '#include "podsim/workload/moe/gshard_math.hpp"\n',
        "src/workload/registry.cpp": '#include "podsim/workload/ps/ctr_ps_model.hpp"\n',
        "src/report/ok.cpp": '#include "podsim/engine/replay.hpp"\n#include "podsim/workload/step_plan.hpp"\n',
    }
    expected = [
        "include/podsim/core/bad.hpp:1: layer 'core' includes layer 'topology', which is above it",
        "include/podsim/engine/bad.hpp:1: layer 'engine' includes SimGrid, which only src/engine/*.cpp may include",
        "include/podsim/workload/bad.hpp:1: workload base includes workload kind 'wafer'",
        "src/engine/bad.cpp:2: layer 'engine' includes layer 'workload'; they are at the same level",
        "src/network/bad.cpp:1: layer 'network' includes layer 'engine'; they are at the same level",
        "src/workload/moe/bad.cpp:2: workload kinds 'moe' and 'ps' are at the same level",
        "src/workload/transformer/bad.cpp:1: workload kind 'transformer' includes workload kind 'moe', which is above it",
    ]
    with tempfile.TemporaryDirectory() as root:
        for path, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        problems = check_tree(root)
    ok = len(problems) == len(expected) and all(p.startswith(e) for p, e in zip(problems, expected))
    if not ok:
        print("check_layering self-test FAILED\nexpected (prefixes):\n  " + "\n  ".join(expected) +
              "\ngot:\n  " + "\n  ".join(problems))
        return 1
    print(f"check_layering self-test: {len(expected)} planted violations reported, allowed includes accepted")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check_tree(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the layering (docs/architecture.md, 'Layers')")
        return 1
    print("layering: every include goes to a layer below or to the same layer")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

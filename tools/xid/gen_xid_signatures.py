#!/usr/bin/env python3
"""Generate signatures/xid/xid.<code>.json from NVIDIA's Xid catalog.

Usage (from the repository root):

    python3 tools/xid/gen_xid_signatures.py [--catalog DIR] [--out DIR] [--facts FILE] [--check]

Inputs:
  ../shared/data/nvidia-xid-catalog/xids.tsv   codes, mnemonics, applicability,
                                               resolution buckets, Xid 154 linkage
  tools/xid/xid_text.json                      per-code title/root cause, our words
  tools/xid/real_lines.json                    real Xid lines (examples) + sources
  tools/xid/overlays/xid.<code>.json           hand-curated fields, deep-merged
                                               over the generated entry

Overlay merge rules: objects merge key by key; lists and scalars replace the
generated value; a key written "+name" appends its list to the generated list
"name" instead of replacing it.

Outputs: signatures/xid/xid.<code>.json (each opening with "$schema" and a
"$comment" that names this script, and tagged "generated"), and tools/xid/catalog_facts.tsv (the
catalog's facts only: code, mnemonic, applicability, resolution buckets, Xid
154 linkage), which tests/catalog/ reads so that a clean clone without
../shared can check every entry's role against NVIDIA's buckets.

Roles come from the immediate resolution bucket (see role_for): IGNORE is never
a cause; an action bucket (RESTART_APP, RESET_GPU, CONTACT_SUPPORT ...) is a
cause whose fix starts with that action.

Only the standard library is used. Output is deterministic (fixed key order,
2-space indent, trailing newline). --check compares instead of writing and
exits 1 when a file would change.
"""

import argparse
import copy
import csv
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_CATALOG = os.path.join(REPO, "..", "shared", "data", "nvidia-xid-catalog")
DEFAULT_OUT = os.path.join(REPO, "signatures", "xid")
FACTS = os.path.join(HERE, "catalog_facts.tsv")
# From ../shared/data/nvidia-xid-catalog/README.md: the spreadsheet the sheets
# were saved from.
CATALOG_SHA256 = "7f70ce9684be0c9d98a367770341ccc1d8bca4465cebe42dab7e23d57df5d5a5"

# A line we made up (no real log line of the code is known) is labelled
# "synthetic" (src/catalog/loader.cpp accepts log, source, doc, synthetic).
SYNTHETIC_ORIGIN = "synthetic"

CATALOG_REF = {
    "title": "NVIDIA Xid Errors: Xid catalog (codes, mnemonics, resolution buckets)",
    "url": "https://docs.nvidia.com/deploy/xid-errors/index.html",
}
CATALOG_TABLE_REF = {
    "title": "NVIDIA: Analyzing Xid errors with the Xid catalog",
    "url": "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
}
DRIVER_FORMAT_REF = {
    "title": "NVIDIA/open-gpu-kernel-modules kernel_rc.c: how the driver prints 'NVRM: Xid (PCI:...): N, pid=..., name=..., msg'",
    "url": "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/nvidia/src/kernel/gpu/rc/kernel_rc.c",
}
GPU_DEBUG_REF = {
    "title": "NVIDIA GPU Debug Guidelines (GPU reset, field diagnostics)",
    "url": "https://docs.nvidia.com/deploy/gpu-debug-guidelines/index.html",
}
MEM_ERR_REF = {
    "title": "NVIDIA GPU Memory Error Management (containment, row remapping)",
    "url": "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html",
}

# The driver's Xid prefix: "NVRM: Xid (PCI:0000:3b:00): 79, ..." (current
# drivers), "NVRM: Xid (0000:03:00): 14, ..." (older drivers and NVIDIA's own
# doc example), "Xid (PCI:0000:01:00 GPU-I:05 GPU-CI:01): 94" (MIG
# attribution). "\bXid" keeps NVSwitch "SXid (PCI:...)" lines out; the
# trailing \b keeps code 79 from matching "790" and 11 from matching "119".
# Users often redact the bus id before pasting ("Xid (PCI:...): 145, ..."):
# any "(PCI:<anything>)" is accepted then, without a pci capture, so long as
# the code after it is exact.
PCI_RE = r"(?:[0-9A-Fa-f]{4}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-9A-Fa-f])?"
PREFIX_RE = (r"\bXid \((?:(?:PCI:)?(?P<pci>" + PCI_RE + r")(?: GPU-I:\d+)?(?: GPU-CI:\d+)?"
             r"|PCI:[^)]*)\): ")


def xid_pattern(code):
    return PREFIX_RE + "(?P<xid>%d)\\b" % code


# Synthetic line for a code without a known real line: the shape of NVIDIA's
# documentation example for Xid 14 ("NVRM: Xid (0000:03:00): 14, Channel
# 00000001") with the code substituted. It is not the documentation's line for
# that code, so it is labelled synthetic, never doc.
def synthetic_line(code):
    return "NVRM: Xid (0000:03:00): %d, Channel 00000001" % code


def example(line, signal, origin, captures=None):
    ex = {"line": line, "signal": signal}
    if origin:
        ex["origin"] = origin
    if captures:
        ex["captures"] = captures
    return ex


NVLINK5 = (144, 145, 146, 147, 148, 149, 150)

HARDWARE = {48, 54, 63, 64, 79, 92, 93, 94, 95, 110, 140, 156, 157, 162, 163,
            164, 165, 167, 168, 171, 172}
NVLINK = {74, 121, 136, 137, 144, 145, 146, 147, 148, 149, 150, 155, 159, 166, 170}

# Role from NVIDIA's immediate resolution bucket (role_for): IGNORE (no action
# needed) is context, never a cause; WORKFLOW_XID_45 ("follow the other Xid")
# is a symptom; XID_154 (the recovery-action summary) is context; every
# action bucket is a cause. Codes the catalog gives no bucket at all:
# status reports are context (power smoothing 162-165, the Xid 48 detail
# lines 171/172), the rest are faults and stay causes.
ACTION_BUCKETS = {"RESTART_APP", "RESET_GPU", "RESTART_BM", "RESTART_VM", "CONTACT_SUPPORT",
                  "CHECK_MECHANICALS", "UPDATE_SWFW", "CHECK_UVM", "WORKFLOW_XID_48",
                  "WORKFLOW_NVLINK_ERR", "WORKFLOW_NVLINK5_ERR"}
NO_BUCKET_CONTEXT = {162, 163, 164, 165, 171, 172}
SYMPTOMS = {45}

# What a context entry refines (only causes; the correlator attaches it to
# the first incident of one of them). Codes not listed refine nothing: they
# show in `denpex grep`, not in a diagnosis.
REFINES = {
    63: [48, 94, 95, 140, 64],           # row remap / page retirement after an ECC error
    92: [48, 94, 95, 64, 140],           # rising correctable-error rate before an uncorrectable one
    171: [48, 94, 95],                   # DRAM detail of an Xid 48
    172: [48, 94, 95],                   # SRAM detail of an Xid 48
    43: [13, 31],                        # channel stopped after the app's fault (gpud dmesg.decode.iso.log)
    38: [109],                           # FECS watchdog, then Xid 109 (open-gpu-kernel-modules#1045)
    137: [145],                          # PRIV error on the link of an Xid 145 (NVIDIA/nccl#2241)
}


def role_for(code, imm):
    if code in SYMPTOMS:
        return "symptom"
    if imm in ("IGNORE", "XID_154"):
        return "context"
    if imm == "":
        return "context" if code in NO_BUCKET_CONTEXT else "cause"
    if imm in ACTION_BUCKETS:
        return "cause"
    sys.exit("xid %d: immediate bucket %r has no role rule" % (code, imm))

# (severity, priority) by immediate bucket, for causes and the symptom 45
# (context entries: severity_for)
BUCKET_SEVERITY = {
    "RESTART_BM": ("critical", 90),
    "WORKFLOW_XID_48": ("critical", 88),
    "WORKFLOW_NVLINK_ERR": ("critical", 84),
    "RESET_GPU": ("critical", 80),
    "WORKFLOW_NVLINK5_ERR": ("error", 80),
    "RESTART_VM": ("error", 70),
    "CHECK_MECHANICALS": ("error", 70),
    "RESTART_APP": ("error", 60),
    "CONTACT_SUPPORT": ("error", 60),
    "UPDATE_SWFW": ("error", 50),
    "CHECK_UVM": ("warning", 45),
    "WORKFLOW_XID_45": ("warning", 20),
    "": ("warning", 40),
}

# per-code (severity, priority) where the bucket alone says too little
CODE_SEVERITY = {
    13: ("error", 62), 31: ("error", 60),
    79: ("critical", 90), 48: ("critical", 88), 95: ("critical", 85),
    94: ("error", 75), 74: ("critical", 84),
    119: ("critical", 82), 120: ("critical", 82), 140: ("critical", 86),
    64: ("critical", 85), 62: ("critical", 80), 109: ("critical", 72),
    8: ("error", 58), 46: ("critical", 78), 110: ("critical", 80),
    143: ("critical", 80), 158: ("critical", 80),
    149: ("critical", 84), 145: ("critical", 82),
    106: ("info", 5), 107: ("info", 5),
    152: ("info", 5), 153: ("info", 5),
    163: ("warning", 25), 164: ("warning", 25), 165: ("warning", 30),
    166: ("error", 60), 167: ("critical", 88), 168: ("error", 65),
    169: ("critical", 80), 170: ("error", 55),
}

# engine faults that, by our inference (NVIDIA's catalog gives no cause or
# scope for them), lose only one decode/encode context, and codes that do not
# occur in a running job: no claim that they hang the other ranks
LOCAL_FAMILIES = {"nvdec", "nvjpg", "ofa", "nvenc"}
LOCAL_CODES = {54, 78, 151, 152, 153, 166, 168, 170}

HANG_SYMPTOMS = ["pytorch.nccl.watchdog-timeout", "nccl.remote-peer-exited",
                 "pytorch.nccl.communicator-aborted"]

# What the process on the faulting GPU itself reports after a fatal Xid: the
# CUDA error its next API call returns. These are causes in their own right
# (a kernel bug also produces them), so the correlator folds them into the Xid
# only when they come after it on the same node.
APP_CUDA_ERRORS = ["cuda.unspecified-launch-failure", "cuda.illegal-memory-access", "cuda.unknown-error",
                   "cuda.ecc-uncorrectable", "cuda.illegal-instruction", "cuda.misaligned-address",
                   "nccl.unhandled-cuda-error"]

# ---------------------------------------------------------------------------
# Resolution buckets, explained in our own words.
# immediate bucket -> fix; investigatory bucket -> verify

FIX = {
    "RESTART_APP": {
        "summary": "Restart the job; the GPU itself does not need a reset for this Xid.",
        "steps": [
            "Let the failed job exit (stop the remaining ranks if the launcher has not) and resubmit it from the last checkpoint.",
            "If the same Xid comes back on the same GPU, follow the verify steps before resubmitting again.",
        ],
        "commands": ["nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"],
    },
    "RESET_GPU": {
        "summary": "Drain the GPU and reset it before it runs more work.",
        "steps": [
            "Stop or let exit every process using the GPU (the reset refuses while the GPU is in use).",
            "Reset it: nvidia-smi -r -i <gpu> (on NVSwitch/NVLink baseboards the reset may have to include the peer GPUs, with nvidia-fabricmanager running).",
            "If the reset fails or the Xid returns right away, reboot the node.",
        ],
        "commands": ["nvidia-smi --query-compute-apps=pid,process_name --format=csv -i <gpu>",
                     "sudo nvidia-smi -r -i <gpu>"],
    },
    "RESTART_BM": {
        "summary": "Take the node out of service and reboot it (cold power cycle if a warm reboot does not bring the GPU back).",
        "steps": [
            "Cordon/drain the node in the scheduler so no new job lands on it.",
            "Reboot the node; a GPU in this state cannot be recovered by a GPU reset.",
            "After the reboot confirm the GPU enumerates and passes a short diagnostic before returning the node to service.",
        ],
        "commands": ["sudo systemctl reboot", "nvidia-smi -L", "dcgmi diag -r 1"],
    },
    "WORKFLOW_XID_48": {
        "summary": "Reset the GPU; if Xid 63/64 (row remapping) appear with it, drain the GPU first and then reset it so the remap takes effect.",
        "steps": [
            "Check which memory reported the error (framebuffer/HBM versus on-chip SRAM) in the Xid text and with nvidia-smi -q -d ECC.",
            "Alone: reset the GPU (nvidia-smi -r -i <gpu>). With Xid 63/64: drain the jobs on that GPU, then reset it.",
            "For SRAM errors check whether the SRAM error threshold flag is set; if it is, run field diagnostics and start an RMA.",
        ],
        "commands": ["nvidia-smi -q -i <gpu> -d ECC,ROW_REMAPPER", "sudo nvidia-smi -r -i <gpu>"],
    },
    "WORKFLOW_NVLINK_ERR": {
        "summary": "Decode the register values printed in the Xid 74 line, then reset the GPU (or reboot the node) to bring the link back.",
        "steps": [
            "Read the hex fields of the Xid 74 message and look up the set bits in NVIDIA's Xid catalog (WORKFLOW_NVLINK_ERR): some bits are ignorable, some are sympathetic to another error, some point at link hardware.",
            "If another Xid or an NVSwitch SXid accompanies it, handle that one first; a peer GPU failure makes its neighbours report Xid 74.",
            "Reset the GPU or reboot the node to retrain the link; reseat cables/boards if the same link keeps failing.",
        ],
        "commands": ["nvidia-smi nvlink -s -i <gpu>", "nvidia-smi nvlink -e -i <gpu>", "sudo nvidia-smi -r -i <gpu>"],
    },
    "WORKFLOW_NVLINK5_ERR": {
        "summary": "Decode the NVLink5 line (sub-component, Fatal/Nonfatal, IntrInfo, ErrorStatus) against the catalog's Xid 144-150 table and apply the recovery action the driver announces in Xid 154.",
        "steps": [
            "Read the sub-component name and the Fatal/Nonfatal word from the line; Nonfatal events with training continuing need no action.",
            "Decode IntrInfo and ErrorStatus (the first two hex values) with the catalog's 'XID 144-150 Decode' table; the encoding changed with driver R575.",
            "Follow the Xid 154 recovery action for that GPU (drain and reset, GPU reset, or node reboot); check the peer (switch tray, cable cartridge, other GPU) when the decode says peer-side link down.",
        ],
        "commands": ["nvidia-smi -q -i <gpu> | grep -i -A2 'recovery action'", "nvidia-smi nvlink -s -i <gpu>"],
    },
    "WORKFLOW_XID_45": {
        "summary": "Nothing to repair for Xid 45 itself: handle the Xid it names (or that precedes it on the same GPU). Only when it appears alone on an NVSwitch system, restart nvidia-fabricmanager.",
        "steps": [
            "Look for 'caused by previous Xid N' in the line, or for another Xid on the same PCI address just before it, and follow that entry.",
            "If the job was stopped on purpose (Ctrl-C, scheduler cancel, torchrun stopping workers after another rank failed), this Xid is expected.",
            "Solo Xid 45 on an NVSwitch-based system: restart the fabric manager service.",
        ],
        "commands": ["journalctl -k | grep -E 'NVRM: Xid \\(PCI:<pci>' | tail -20", "sudo systemctl restart nvidia-fabricmanager"],
    },
    "IGNORE": {
        "summary": "No recovery action is needed for this Xid by itself; keep the GPU in service.",
        "steps": ["Check whether another Xid on the same GPU accompanies it and handle that one instead."],
    },
    "CHECK_MECHANICALS": {
        "summary": "Check the GPU's seating and its power connectors.",
        "steps": ["Power the node down, reseat the GPU and its auxiliary power cables, and confirm the PSU rails are healthy."],
    },
    "UPDATE_SWFW": {
        "summary": "Update the driver and firmware so host and guest versions are compatible.",
        "steps": ["Install matching host (vGPU manager) and guest driver versions and a vGPU profile supported by the GPU and guest OS."],
        "commands": ["nvidia-smi -q | grep -i -e 'driver version' -e 'vgpu'"],
    },
    "RESTART_VM": {
        "summary": "Restart the virtual machine that owns the GPU.",
        "steps": ["Stop the workload and restart the VM; a GPU reset or host reboot is not needed."],
    },
    "XID_154": {
        "summary": "Do what the new recovery action in the line says for that GPU.",
        "steps": [
            "0x0 None: nothing to do.",
            "0x1 GPU Reset Required (shown as 'PF FLR' on some drivers): stop the GPU's processes and reset it (nvidia-smi -r -i <gpu>).",
            "0x2 Node Reboot Required: drain the node and reboot it.",
            "0x3 Drain P2P: let peer-to-peer/NVLink jobs finish, then reset; 0x4 Drain and Reset: drain all jobs from the GPU, then reset it.",
            "0x5 IMEX domain recovery (multi-node NVLink): recover the IMEX domain rather than the GPU.",
        ],
        "commands": ["nvidia-smi -q -i <gpu> | grep -i -A2 'recovery action'", "sudo nvidia-smi -r -i <gpu>"],
    },
    "CHECK_UVM": {
        "summary": "If the GPU is used through UVM or vGPU, reset it; otherwise no action is needed.",
        "steps": ["Reset the GPU when UVM/vGPU workloads run on it; otherwise keep it in service and handle any companion Xid."],
        "commands": ["sudo nvidia-smi -r -i <gpu>"],
    },
    "CONTACT_SUPPORT": {
        "summary": "Collect a bug report right away and open a case with NVIDIA or the system vendor.",
        "steps": ["Run nvidia-bug-report.sh before rebooting (it captures the driver state), note the GPU serial number and driver version, and open a support case."],
        "commands": ["sudo nvidia-bug-report.sh"],
    },
    # No bucket in the catalog: say so; per-code advice (ours) comes from
    # xid_text.json "fix".
    "": {
        "summary": "NVIDIA's catalog names no recovery action for this Xid. If an Xid 154 line follows for the same GPU, do what it says; otherwise collect a bug report before resetting anything and ask NVIDIA or the system vendor.",
        "steps": ["Look for an Xid 154 line for the same PCI address right after this one (the driver's recovery action for the GPU) and follow it."],
        "commands": ["nvidia-smi -q -i <gpu> | grep -i -A2 'recovery action'", "sudo nvidia-bug-report.sh"],
    },
}

VERIFY = {
    "CONTACT_SUPPORT": ("If it recurs after the recovery step, capture nvidia-bug-report.sh output and escalate to NVIDIA or the system vendor.",
                        ["sudo nvidia-bug-report.sh"]),
    "CHECK_APP/CUDA": ("Usually caused by the application or a user-space library handing the GPU bad commands or data; the pid in the line names the process. Rerun it under compute-sanitizer or with synchronous launches to find the failing kernel; report a driver issue only if a known-good application triggers it.",
                       ["CUDA_LAUNCH_BLOCKING=1 python train.py", "compute-sanitizer --tool memcheck python train.py"]),
    "WORKFLOW_XID_13": ("Compare the GPC/TPC/SM named in repeated Xid 13 lines: the same location across different jobs suggests failing hardware (run DCGM diagnostics, then field diagnostics); a single burst, or faults in changing locations, is an application bug to chase with compute-sanitizer.",
                        ["journalctl -k | grep -E 'Xid .*: 13,' | grep -o 'GPC [0-9]*, TPC [0-9]*, SM [0-9]*' | sort | uniq -c", "dcgmi diag -r 3 -i <gpu>", "compute-sanitizer --tool memcheck python train.py"]),
    "WORKFLOW_XID_31": ("Several runs are needed: repeated MMU faults on the same GPU (same PCI address) across jobs suggest hardware (run DCGM diagnostics, then field diagnostics); faults on varying GPUs, or a single burst, point at the application or a library bug.",
                        ["journalctl -k | grep -E 'Xid \\([^)]*\\): 31,' | grep -o 'Xid ([^)]*)' | sort | uniq -c", "dcgmi diag -r 3 -i <gpu>", "compute-sanitizer --tool memcheck python train.py"]),
    "WORKFLOW_XID_48": ("Read the ECC and row-remapper state: uncorrectable counts, pending or failed remaps, and (for SRAM errors) whether the SRAM threshold flag is set; a set flag or a remap failure means field diagnostics and RMA.",
                        ["nvidia-smi -q -i <gpu> -d ECC,ROW_REMAPPER", "dcgmi diag -r 3 -i <gpu>"]),
    "IGNORE": ("Nothing to investigate on its own; confirm there is no other Xid on the same GPU around the same time.",
               ["journalctl -k | grep 'NVRM: Xid'"]),
    "IGNORE (sympathetic)": ("This Xid normally rides along with another one (an ECC error, Xid 48). Look for that companion on the same GPU and investigate it; escalate only if this one appears alone or keeps recurring after the companion is fixed.",
                             ["journalctl -k | grep -E 'NVRM: Xid \\(PCI:<pci>'", "nvidia-smi -q -i <gpu> -d ECC,ROW_REMAPPER"]),
    "INVESTIGATE_SW": ("A software problem (the user's or NVIDIA's): use the pid in the line to find the process, check the driver version against known issues, and report a driver bug if the application is known to be correct.",
                       ["nvidia-smi --query-gpu=driver_version --format=csv", "sudo nvidia-bug-report.sh"]),
    "UPDATE_SWFW": ("Confirm host and guest driver versions match and the vGPU profile is supported.",
                    ["nvidia-smi -q | grep -i -e 'driver version' -e vgpu"]),
    "INVESTIGATE_LINK_SI": ("Check the link's signal integrity: per-link error counters and the access/trunk link telemetry of the NVLink domain; persistent training failures on one link point at a cable, connector or board.",
                            ["nvidia-smi nvlink -s -i <gpu>", "nvidia-smi nvlink -e -i <gpu>"]),
    "XID_137_FLOW": ("Usually an application bug in peer-to-peer/NVLink memory access: rerun under compute-sanitizer or with CUDA_DEVICE_WAITS_ON_EXCEPTION=1 and attach cuda-gdb; report a bug if both are inconclusive.",
                     ["compute-sanitizer --tool memcheck python train.py", "CUDA_DEVICE_WAITS_ON_EXCEPTION=1 python train.py"]),
    "WORKFLOW_NVLINK5_ERR": ("Decode IntrInfo/ErrorStatus with the catalog's Xid 144-150 table to see whether the fault is local, on the peer, or a link/cable issue; check the peer device and link telemetry accordingly.",
                             ["nvidia-smi nvlink -s -i <gpu>", "nvidia-smi nvlink -e -i <gpu>"]),
    "N/A Informational only regarding another Xid": ("Find the Xid that triggered the change (same PCI address, just before) and diagnose that one.",
                                                     ["journalctl -k | grep -E 'NVRM: Xid \\(PCI:<pci>'"]),
    "INVESTIGATE_SW_USER": ("Find out whether a user or a management tool took the link down on purpose; if nobody did, investigate the software stack.",
                            ["nvidia-smi nvlink -s -i <gpu>"]),
    "SYMPATHETIC_REPORT_SOLO": ("Usually a side effect of another fault; if it shows up alone, report it.",
                                ["journalctl -k | grep 'NVRM: Xid'"]),
    "Solo: RESTART_FM | Not Solo: IGNORE (follow other Xid)": ("Check whether another Xid preceded it on the same GPU (or the line names it with 'caused by previous Xid'); if so investigate that one. If it stands alone on an NVSwitch system, check the fabric manager.",
                                                               ["journalctl -k | grep -E 'NVRM: Xid \\(PCI:<pci>'", "systemctl status nvidia-fabricmanager"]),
    "": ("Check whether the condition repeats and whether an Xid 154 recovery action accompanies it.",
         ["journalctl -k | grep 'NVRM: Xid'"]),
}


def tag(s):
    s = s.strip().lower()
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s


def read_catalog(catalog_dir):
    path = os.path.join(catalog_dir, "xids.tsv")
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t")
        next(reader)
        for r in reader:
            if len(r) < 12 or not r[1].strip().isdigit():
                continue
            code = int(r[1])
            desc = r[3].strip()
            if desc == "Unused":
                continue
            mnemonics = [m.strip() for m in re.split(r"/|\|", r[2]) if m.strip()]
            rows.append({
                "code": code,
                "mnemonics": mnemonics,
                "description": desc,
                "applies": {"A100": r[4].strip(), "H100": r[5].strip(),
                            "B100": r[6].strip(), "GB200": r[7].strip()},
                "immediate": r[8].strip(),
                "investigatory": r[9].strip(),
                "linkage": r[10].strip(),
            })
    return rows


def read_decode(catalog_dir):
    """First documented sub-component name per NVLink5 Xid (facts)."""
    out = {}
    path = os.path.join(catalog_dir, "xid-144-150-decode.tsv")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter="\t")
        next(reader)
        for r in reader:
            if not r or not r[0].strip().isdigit():
                continue
            code = int(r[0])
            name = r[1].strip().split("/")[-1]
            out.setdefault(code, name)
    return out


def merge(base, over):
    """Deep merge; lists replace unless the key is written '+key' (append)."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if k.startswith("+"):
            key = k[1:]
            out[key] = list(out.get(key, [])) + copy.deepcopy(v)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def severity_for(code, role, imm, inv):
    """Severity and priority. A context entry (no action needed) is info when
    the catalog asks for no investigation either, else warning; a cause's
    severity comes from its immediate bucket, with per-code adjustments."""
    if role == "context":
        if code in CODE_SEVERITY and CODE_SEVERITY[code][0] in ("info", "warning"):
            return CODE_SEVERITY[code]
        return ("info", 10) if inv in ("IGNORE", "") else ("warning", 10)
    return CODE_SEVERITY.get(code, BUCKET_SEVERITY.get(imm, ("warning", 40)))


def build(row, text, real, decode, all_codes, linked):
    code = row["code"]
    t = dict(text["codes"][str(code)])
    if "family" in t:
        fam = text["families"][t["family"]]
        t["title"] = fam["title"].format(unit=t["unit"])
        t["cause"] = fam["cause"].format(unit=t["unit"])
    imm, inv = row["immediate"], row["investigatory"]

    role = role_for(code, imm)
    if code in HARDWARE:
        area = "hardware"
    elif code in NVLINK:
        area = "nvlink"
    else:
        area = "driver"
    severity, priority = severity_for(code, role, imm, inv)

    tags = ["xid", "xid-%d" % code] + [m.lower() for m in row["mnemonics"]]
    for b in (imm, inv):
        # bucket names as tags; free-text buckets (45's solo/not-solo rule,
        # 154's "informational" note) are spelled out in fix/verify instead
        if re.fullmatch(r"[A-Z0-9_/]+(?: \(sympathetic\))?", b):
            tb = tag(b)
            if tb not in tags:
                tags.append(tb)
    if code in NVLINK5:
        tags.append("nvlink5")

    mn = " / ".join(row["mnemonics"])
    title = "Xid %d (%s): %s" % (code, mn, t["title"])

    signals = []
    if code in NVLINK5:
        signals.append({
            "id": "xid-fatal",
            "pattern": xid_pattern(code) + r",[^(]*\sFatal\s",
            "description": "driver's Xid %d line with the Fatal word (the fault took the link or GPU down)" % code,
        })
        signals.append({
            "id": "xid-nonfatal",
            "pattern": xid_pattern(code) + r",[^(]*\sNonfatal\s",
            "description": "the same Xid reported as Nonfatal: evidence only, never raises the entry by itself",
            "anchor": False,
        })
    elif code == 45:
        signals.append({
            "id": "xid-line",
            "pattern": xid_pattern(code) + r"(?:.*?\bcaused by previous Xid (?P<caused_by>\d+))?",
            "description": "driver's Xid 45 line; newer drivers add 'caused by previous Xid N' (captured as caused_by)",
        })
    else:
        signals.append({
            "id": "xid-line",
            "pattern": xid_pattern(code),
            "description": "driver's kernel-log line for Xid %d on a GPU (PCI address captured)" % code,
        })

    entry = {
        "id": "xid.%d" % code,
        "title": title,
        "area": area,
        "role": role,
        "severity": severity,
        "priority": priority,
        "tags": tags,
        "signals": signals,
    }
    if role == "symptom":
        entry["generic"] = True
    if role == "cause" and severity in ("error", "critical"):
        # every error-level Xid tears down the owning process's channels
        # (Xid 45); those that kill the training process or the GPU also
        # leave the other ranks hanging in their collectives
        entry["explains"] = ["xid.45"]
        if t.get("family") not in LOCAL_FAMILIES and code not in LOCAL_CODES:
            entry["explains"] += HANG_SYMPTOMS + APP_CUDA_ERRORS
    if role == "context":
        if code == 154:
            refines = sorted(linked)
        else:
            refines = REFINES.get(code, [])
        if refines:
            entry["refines"] = ["xid.%d" % c for c in refines]

    entry["root_cause"] = t["cause"]
    fix = copy.deepcopy(FIX[imm] if imm in FIX else FIX[""])
    if not imm and "fix" in t:
        # no bucket: our own advice for this code replaces the generic text
        fix = {"summary": FIX[""]["summary"].split(". ")[0] + ". " + t["fix"]["summary"]}
        fix.update({k: v for k, v in t["fix"].items() if k != "summary"})
    entry["fix"] = {"summary": "Catalog immediate action %s: %s" % (imm or "(none listed)", fix["summary"])}
    if fix.get("steps"):
        entry["fix"]["steps"] = fix["steps"]
    if fix.get("commands"):
        entry["fix"]["commands"] = fix["commands"]
    vsum, vcmds = VERIFY.get(inv, VERIFY[""])
    entry["verify"] = {
        "summary": "Confirm the Xid %d line names this GPU's PCI address in the kernel log. Catalog investigatory action %s: %s" % (code, inv or "(none listed)", vsum),
        "commands": ["journalctl -k --no-pager | grep -E 'NVRM: Xid \\([^)]*\\): %d,'" % code] + vcmds,
    }
    applies = [g for g, v in row["applies"].items() if v.upper() == "YES"]
    aff = "Per NVIDIA's catalog applies to: %s." % (", ".join(applies) if applies else "none of A100/H100/B100/GB200 (listed for completeness)")
    if row["linkage"]:
        aff += " Triggers an Xid 154 recovery-action line since: %s." % row["linkage"]
    entry["affected"] = aff
    related = []
    if code != 154:
        related.append("xid.154")
    if role == "cause":
        related.append("xid.45")
    if related:
        entry["related"] = related

    refs = [CATALOG_REF, CATALOG_TABLE_REF, DRIVER_FORMAT_REF]
    matches = []
    for r in real.get(code, []):
        sid = signals[0]["id"]
        if code in NVLINK5:
            sid = "xid-nonfatal" if re.search(r"\sNonfatal\s", r["line"]) else "xid-fatal"
        matches.append(example(r["line"], sid, r["origin"], r.get("captures")))
        ref = {"title": r["title"], "url": r["url"]}
        if ref not in refs:
            refs.append(ref)
    if code in NVLINK5:
        # the NVLink5 line layout the catalog's WORKFLOW_NVLINK5_ERR bucket
        # describes, filled with the catalog's sub-component name: made up
        sub = decode.get(code, "NETIR")
        for word, sid in (("Fatal", "xid-fatal"), ("Nonfatal", "xid-nonfatal")):
            if not any(m["signal"] == sid for m in matches):
                matches.append(example(
                    "NVRM: Xid (PCI:0008:01:00): %d, %s %s XC0 i0 Link 00 (0x00000000 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)" % (code, sub, word),
                    sid, SYNTHETIC_ORIGIN, {"pci": "0008:01:00", "xid": str(code)}))
    if not matches:
        matches.append(example(synthetic_line(code), signals[0]["id"], SYNTHETIC_ORIGIN,
                               {"pci": "0000:03:00", "xid": str(code)}))
    entry["references"] = refs
    entry["examples"] = {"match": matches, "no_match": no_match_for(code, real)}
    return entry


# An entry none of whose match examples was copied from a real log (origin
# "log") is tagged FORMAT_ONLY_TAG: its lines only show the documented shape
# (the made-up synthetic line, NVIDIA's or a peer's documentation line, or the
# driver source's format comment), so no public kernel log of that Xid was
# found to test the pattern against. Decided after the overlay merge, so a real
# line an overlay adds counts.
FORMAT_ONLY_TAG = "documented-format-only"


def mark_format_only(entry):
    origins = {m.get("origin") for m in entry["examples"]["match"] if isinstance(m, dict)}
    if "log" not in origins and FORMAT_ONLY_TAG not in entry["tags"]:
        entry["tags"].append(FORMAT_ONLY_TAG)


# Every entry this script writes says so in its own file, twice: a "$comment"
# for the person who opens the file (the loader ignores "$schema" and
# "$comment"), and the tag "generated", which denpex itself sees (free-form,
# shown among a SARIF rule's tags, meaningless to the correlator). Both are
# added after the overlay merge, so an overlay cannot drop them.
GENERATED_TAG = "generated"
SCHEMA = os.path.join(REPO, "schemas", "denpex-signature.schema.json")


def mark_generated(entry):
    if GENERATED_TAG not in entry["tags"]:
        entry["tags"].append(GENERATED_TAG)


def with_header(entry, out_dir, overlay):
    """The entry with "$schema" (relative to out_dir) and "$comment" first."""
    inputs = "NVIDIA's Xid catalog (../shared/data/nvidia-xid-catalog), tools/xid/xid_text.json, tools/xid/real_lines.json"
    if overlay:
        inputs += " and tools/xid/overlays/%s" % os.path.basename(overlay)
    head = {
        "$schema": os.path.relpath(SCHEMA, out_dir).replace(os.sep, "/"),
        "$comment": "Generated by tools/xid/gen_xid_signatures.py from %s; edit the generator's inputs, "
                    "not this file (tools/xid/README.md)" % inputs,
    }
    head.update(entry)
    return head


# Real near-misses shared by all entries.
COMMON_NO_MATCH = [
    # GPU identification line printed before the first Xid (real, open-gpu-kernel-modules#1151)
    "NVRM: GPU at PCI:0000:01:00: GPU-5f7a9ad6-8a58-1f45-473a-76281b72153c",
    # NVSwitch SXid line: same shape, different device family (real, gpud sxid README)
    "[6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
]


def no_match_for(code, real):
    out = list(COMMON_NO_MATCH)
    s = str(code)
    # a real line of another code whose number starts with this one (11 vs 119 ...)
    prefixed = [r for c, rs in sorted(real.items()) if c != code and str(c).startswith(s) for r in rs]
    others = [r for c, rs in sorted(real.items()) if c != code for r in rs]
    pick = prefixed[:1] or []
    # plus one real line of a nearby code
    near = sorted(others, key=lambda r: (abs(r["code"] - code), r["code"]))
    for r in near:
        if r not in pick:
            pick.append(r)
            break
    out.extend(r["line"] for r in pick)
    return out


def facts_tsv(rows):
    """The catalog's facts (no prose) for the codes in use, one row each."""
    out = ["# NVIDIA Xid catalog, facts only: codes, mnemonics, applicability, resolution buckets, Xid 154 linkage.",
           "# source: %s" % CATALOG_REF["url"],
           "# source: %s" % CATALOG_TABLE_REF["url"],
           "# Generated by tools/xid/gen_xid_signatures.py from ../shared/data/nvidia-xid-catalog/xids.tsv",
           "# (Xid-Catalog.xlsx, sha256 %s). Do not edit." % CATALOG_SHA256,
           "\t".join(["code", "mnemonic", "a100", "h100", "b100", "gb200", "immediate", "investigatory", "xid154_linkage"])]
    for r in sorted(rows, key=lambda r: r["code"]):
        a = r["applies"]
        out.append("\t".join([str(r["code"]), " / ".join(r["mnemonics"]), a["A100"], a["H100"], a["B100"], a["GB200"],
                              r["immediate"], r["investigatory"], r["linkage"]]))
    return "\n".join(out) + "\n"


def dump(entry):
    return json.dumps(entry, indent=2, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog", default=DEFAULT_CATALOG)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--facts", default=FACTS, help="where the catalog's facts go (default tools/xid/catalog_facts.tsv)")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if any file would change")
    args = ap.parse_args()

    rows = read_catalog(args.catalog)
    decode = read_decode(args.catalog)
    with open(os.path.join(HERE, "xid_text.json"), encoding="utf-8") as f:
        text = json.load(f)
    with open(os.path.join(HERE, "real_lines.json"), encoding="utf-8") as f:
        real = {}
        for r in json.load(f)["lines"]:
            real.setdefault(r["code"], []).append(r)
    all_codes = {r["code"] for r in rows}
    causes = {r["code"] for r in rows if role_for(r["code"], r["immediate"]) == "cause"}
    # Xid 154 refines the causes the catalog links to it, plus those seen
    # followed by Xid 154 in real logs (8, 31, 62, 79, 109, 119, 149).
    linked = ({r["code"] for r in rows if r["linkage"]} | {8, 31, 62, 79, 109, 119, 149}) & causes

    missing = sorted(all_codes - {int(k) for k in text["codes"]})
    if missing:
        sys.exit("xid_text.json lacks codes: %s" % missing)

    os.makedirs(args.out, exist_ok=True)
    changed = []
    written = set()
    facts = facts_tsv(rows)
    old_facts = None
    if os.path.exists(args.facts):
        with open(args.facts, encoding="utf-8") as f:
            old_facts = f.read()
    if old_facts != facts:
        changed.append(os.path.relpath(args.facts, REPO))
        if not args.check:
            with open(args.facts, "w", encoding="utf-8") as f:
                f.write(facts)
    for row in sorted(rows, key=lambda r: r["code"]):
        entry = build(row, text, real, decode, all_codes, linked)
        ov_path = os.path.join(HERE, "overlays", "xid.%d.json" % row["code"])
        has_overlay = os.path.exists(ov_path)
        if has_overlay:
            with open(ov_path, encoding="utf-8") as f:
                ov = json.load(f)
            ov.pop("_comment", None)
            entry = merge(entry, ov)
        mark_format_only(entry)
        mark_generated(entry)
        entry = with_header(entry, args.out, ov_path if has_overlay else None)
        name = "%s.json" % entry["id"]
        written.add(name)
        path = os.path.join(args.out, name)
        data = dump(entry)
        old = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = f.read()
        if old != data:
            changed.append(name)
            if not args.check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(data)
    stale = sorted(n for n in os.listdir(args.out)
                   if n.startswith("xid.") and n.endswith(".json") and n not in written)
    if args.check:
        if changed or stale:
            print("out of date: %s%s" % (", ".join(changed), (" stale: " + ", ".join(stale)) if stale else ""))
            return 1
        print("%d entries up to date" % len(written))
        return 0
    for n in stale:
        print("warning: %s is not generated from the catalog (left in place)" % n, file=sys.stderr)
    print("wrote %d entries (%d changed) to %s" % (len(written), len(changed), os.path.relpath(args.out, REPO)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

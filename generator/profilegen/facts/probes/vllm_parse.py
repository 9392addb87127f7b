"""Reads command lines (a JSON list of argv lists) on stdin and prints, as JSON, whether the
vLLM installed beside it accepts each as `vllm serve ARGV`: its own parser's answer."""

from __future__ import annotations

import json
import sys

from argparse_facts import quietly
from vllm_probe import parsers


def main() -> None:
    top, _ = parsers()
    argvs = json.load(sys.stdin)
    json.dump([quietly(top.parse_args, ["serve", *argv]) for argv in argvs], sys.stdout)


if __name__ == "__main__":
    main()

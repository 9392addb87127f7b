#!/bin/bash
set -euo pipefail
echo "tiny switch applied"

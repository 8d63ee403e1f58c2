# shellcheck shell=bash
# The demos' common setup (sourced by scripts/demo.sh and demo-agent.sh,
# from the repository root): their own namespace and interface names, so a
# demo never meets a test run's, and the e2e helpers with their checks.
NS_C=bgdemo-client NS_GW=bgdemo-gateway NS_S=bgdemo-server
IF_C=eth0 IF_GWC=lan0 IF_GWS=wan0 IF_S=eth0
E2E_LOCK_WAIT=10
# shellcheck source=tests/e2e/lib.sh
source tests/e2e/lib.sh
require_cmds "${E2E_CMDS[@]}"

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The release of bloomgate, one definition: bloomgate_build_info{version}
 * on the agent's /metrics, and whatever else reports a version.
 */
#ifndef BLOOMGATE_VERSION_H
#define BLOOMGATE_VERSION_H

#define BG_VERSION "0.9.0"
/* What the agent's HTTP requests say they are (a list's fetch, a CrowdSec
 * local API's pull: CrowdSec reads a bouncer's type and version from it,
 * and logs "bad user agent" for one without a '/') */
#define BG_USER_AGENT "bloomgate/" BG_VERSION

#endif

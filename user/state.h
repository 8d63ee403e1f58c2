/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transitional: user/state.c was split by concern into pins, attach, swap
 * and record. This header only includes theirs so that files not yet
 * changed to include what they use still build; include the one you need
 * instead, and delete this file when nothing includes it.
 */
#ifndef BLOOMGATE_STATE_H
#define BLOOMGATE_STATE_H

#include "pins.h"
#include "attach.h"
#include "swap.h"
#include "record.h"

#endif

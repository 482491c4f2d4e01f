/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* autosleepctl soak: argv[0] is "soak"; parses its own options. Returns 0, or <0 after saying why. */
int verb_soak(int argc, char **argv);

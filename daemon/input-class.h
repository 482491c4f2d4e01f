/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <libevdev/libevdev.h>

/* What kind of user input an evdev device produces, from its capabilities alone. */
enum input_class {
	INPUT_CLASS_NONE,        /* switches, power buttons, ACPI video, sensors */
	INPUT_CLASS_KEYBOARD,
	INPUT_CLASS_POINTER,     /* mice, trackballs, trackpoints */
	INPUT_CLASS_TOUCHPAD,
	INPUT_CLASS_TOUCHSCREEN,
	INPUT_CLASS_TABLET,
	_INPUT_CLASS_MAX,
	_INPUT_CLASS_INVALID = -22,
};

enum input_class input_class_of(const struct libevdev *dev);
const char *input_class_to_string(enum input_class c);
enum input_class input_class_from_string(const char *s);

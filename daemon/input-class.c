/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "input-class.h"
#include "macro.h"
#include "string-table.h"

static const char *const class_names[_INPUT_CLASS_MAX] = {
	[INPUT_CLASS_NONE] = "none",
	[INPUT_CLASS_KEYBOARD] = "keyboard",
	[INPUT_CLASS_POINTER] = "pointer",
	[INPUT_CLASS_TOUCHPAD] = "touchpad",
	[INPUT_CLASS_TOUCHSCREEN] = "touchscreen",
	[INPUT_CLASS_TABLET] = "tablet",
};

DEFINE_STRING_TABLE_TO_STRING(input_class, enum input_class, class_names, _INPUT_CLASS_MAX)

DEFINE_STRING_TABLE_FROM_STRING(input_class, enum input_class, class_names, _INPUT_CLASS_MAX, _INPUT_CLASS_INVALID)

static int has_key(const struct libevdev *dev, unsigned code)
{
	return libevdev_has_event_code(dev, EV_KEY, code);
}

enum input_class input_class_of(const struct libevdev *dev)
{
	/* Tablets and touch devices report absolute axes; tell them apart by their tools. */
	if (libevdev_has_event_code(dev, EV_ABS, ABS_X) && libevdev_has_event_code(dev, EV_ABS, ABS_Y)) {
		if (has_key(dev, BTN_TOOL_PEN) || has_key(dev, BTN_STYLUS))
			return INPUT_CLASS_TABLET;
		if (has_key(dev, BTN_TOOL_FINGER) || libevdev_has_property(dev, INPUT_PROP_POINTER))
			return INPUT_CLASS_TOUCHPAD;
		if (has_key(dev, BTN_TOUCH) || libevdev_has_property(dev, INPUT_PROP_DIRECT))
			return INPUT_CLASS_TOUCHSCREEN;
		/* Absolute pointers, such as a VM's tablet device. */
		if (has_key(dev, BTN_LEFT))
			return INPUT_CLASS_POINTER;
	}
	if (libevdev_has_event_code(dev, EV_REL, REL_X) && libevdev_has_event_code(dev, EV_REL, REL_Y))
		return INPUT_CLASS_POINTER;
	/*
	 * A keyboard has letters. This leaves out devices with EV_KEY for only a
	 * few buttons: power and sleep buttons, lid-adjacent hotkeys, ACPI video.
	 */
	if (has_key(dev, KEY_A) && has_key(dev, KEY_Z) && has_key(dev, KEY_SPACE))
		return INPUT_CLASS_KEYBOARD;
	return INPUT_CLASS_NONE;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "input-class.h"

/*
 * Capabilities as recorded from real devices (evtest / libinput record),
 * rebuilt in memory with libevdev: no kernel device is needed.
 */
static struct libevdev *device(const char *name, const unsigned (*codes)[2], const unsigned *props)
{
	struct libevdev *d = libevdev_new();
	struct input_absinfo abs = { .minimum = 0, .maximum = 4096, .resolution = 40 };

	assert_non_null(d);
	libevdev_set_name(d, name);
	for (; codes && (*codes)[0] != EV_MAX; codes++)
		assert_int_equal(libevdev_enable_event_code(d, (*codes)[0], (*codes)[1],
							    (*codes)[0] == EV_ABS ? &abs : NULL), 0);
	for (; props && *props != INPUT_PROP_MAX; props++)
		assert_int_equal(libevdev_enable_property(d, *props), 0);
	return d;
}

#define END { EV_MAX, 0 }

static void expect(const char *name, const unsigned (*codes)[2], const unsigned *props, enum input_class want)
{
	struct libevdev *d = device(name, codes, props);

	if (input_class_of(d) != want)
		fail_msg("%s: got %s, want %s", name, input_class_to_string(input_class_of(d)), input_class_to_string(want));
	libevdev_free(d);
}

static void test_keyboard(void **state)
{
	static const unsigned at[][2] = { { EV_KEY, KEY_ESC }, { EV_KEY, KEY_A }, { EV_KEY, KEY_Z }, { EV_KEY, KEY_SPACE },
					  { EV_KEY, KEY_ENTER }, { EV_MSC, MSC_SCAN }, { EV_LED, LED_CAPSL }, END };
	(void)state;
	expect("AT Translated Set 2 keyboard", at, NULL, INPUT_CLASS_KEYBOARD);
}

static void test_pointers(void **state)
{
	static const unsigned mouse[][2] = { { EV_KEY, BTN_LEFT }, { EV_KEY, BTN_RIGHT }, { EV_REL, REL_X },
					     { EV_REL, REL_Y }, { EV_REL, REL_WHEEL }, END };
	/* QEMU's USB tablet: an absolute pointer with buttons. */
	static const unsigned vm_tablet[][2] = { { EV_KEY, BTN_LEFT }, { EV_ABS, ABS_X }, { EV_ABS, ABS_Y }, END };
	(void)state;
	expect("Logitech USB Optical Mouse", mouse, NULL, INPUT_CLASS_POINTER);
	expect("QEMU USB Tablet", vm_tablet, NULL, INPUT_CLASS_POINTER);
}

static void test_touch_and_pen(void **state)
{
	static const unsigned touchpad[][2] = { { EV_KEY, BTN_LEFT }, { EV_KEY, BTN_TOOL_FINGER }, { EV_KEY, BTN_TOUCH },
						{ EV_ABS, ABS_X }, { EV_ABS, ABS_Y }, { EV_ABS, ABS_MT_POSITION_X }, END };
	static const unsigned touchpad_props[] = { INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD, INPUT_PROP_MAX };
	static const unsigned screen[][2] = { { EV_KEY, BTN_TOUCH }, { EV_ABS, ABS_X }, { EV_ABS, ABS_Y }, END };
	static const unsigned screen_props[] = { INPUT_PROP_DIRECT, INPUT_PROP_MAX };
	static const unsigned pen[][2] = { { EV_KEY, BTN_TOOL_PEN }, { EV_KEY, BTN_STYLUS }, { EV_KEY, BTN_TOUCH },
					   { EV_ABS, ABS_X }, { EV_ABS, ABS_Y }, { EV_ABS, ABS_PRESSURE }, END };
	(void)state;
	expect("SynPS/2 Synaptics TouchPad", touchpad, touchpad_props, INPUT_CLASS_TOUCHPAD);
	expect("ELAN Touchscreen", screen, screen_props, INPUT_CLASS_TOUCHSCREEN);
	expect("Wacom Intuos Pen", pen, NULL, INPUT_CLASS_TABLET);
}

static void test_not_user_input(void **state)
{
	static const unsigned lid[][2] = { { EV_SW, SW_LID }, END };
	static const unsigned power[][2] = { { EV_KEY, KEY_POWER }, END };
	static const unsigned video[][2] = { { EV_KEY, KEY_BRIGHTNESSUP }, { EV_KEY, KEY_BRIGHTNESSDOWN },
					     { EV_KEY, KEY_SWITCHVIDEOMODE }, END };
	/* An accelerometer: absolute axes, no buttons, no touch. */
	static const unsigned accel[][2] = { { EV_ABS, ABS_X }, { EV_ABS, ABS_Y }, { EV_ABS, ABS_Z }, END };
	static const unsigned accel_props[] = { INPUT_PROP_ACCELEROMETER, INPUT_PROP_MAX };
	/* A headset's volume buttons have keys, but no letters. */
	static const unsigned headset[][2] = { { EV_KEY, KEY_VOLUMEUP }, { EV_KEY, KEY_VOLUMEDOWN }, { EV_KEY, KEY_PLAYPAUSE }, END };
	(void)state;
	expect("Lid Switch", lid, NULL, INPUT_CLASS_NONE);
	expect("Power Button", power, NULL, INPUT_CLASS_NONE);
	expect("Video Bus", video, NULL, INPUT_CLASS_NONE);
	expect("Accelerometer", accel, accel_props, INPUT_CLASS_NONE);
	expect("Headset Jack", headset, NULL, INPUT_CLASS_NONE);
}

static void test_names(void **state)
{
	(void)state;
	for (int c = 0; c < _INPUT_CLASS_MAX; c++)
		assert_int_equal(input_class_from_string(input_class_to_string((enum input_class)c)), c);
	assert_int_equal(input_class_from_string("joystick"), _INPUT_CLASS_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyboard),
		cmocka_unit_test(test_pointers),
		cmocka_unit_test(test_touch_and_pen),
		cmocka_unit_test(test_not_user_input),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hand-back.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "sysfs.h"

static const char *arg_config;
static const char *arg_root;
static bool arg_dry_run;
static bool arg_restore_knob;
static bool arg_hand_back;

static void help(void)
{
	printf("Usage: autosleepd [OPTIONS...]\n\n"
	       "Suspend the machine whenever nothing holds it awake.\n\n"
	       "  -h --help              Show this help\n"
	       "     --version           Show the version\n"
	       "     --config=FILE       Read FILE instead of %s\n"
	       "                         (drop-ins are read from FILE.d/)\n"
	       "     --root=DIR          Prefix every /sys, /proc, /boot and /dev path with DIR\n"
	       "     --dry-run           Do everything but write wakeup_count and state; log instead\n"
	       "     --restore-knob      Put back the /sys/power/userspace_autosleep value an\n"
	       "                         instance that died saved in $RUNTIME_DIRECTORY, disarm\n"
	       "                         the wakeup_count check it left, and exit (the unit's\n"
	       "                         ExecStopPost=)\n"
	       "     --hand-back         Remove this daemon's kernel wake locks and disarm the\n"
	       "                         wakeup_count check, and exit (after the unit's last\n"
	       "                         failed start: autosleepd-hand-back.service)\n"
	       "     --log-level=LEVEL   emerg, alert, crit, err, warning, notice, info or debug\n"
	       "                         (default: info)\n",
	       CONFIG_DEFAULT_PATH);
}

static int parse_argv(int argc, char *argv[])
{
	enum {
		ARG_VERSION = 0x100,
		ARG_CONFIG,
		ARG_ROOT,
		ARG_DRY_RUN,
		ARG_LOG_LEVEL,
		ARG_RESTORE_KNOB,
		ARG_HAND_BACK,
	};
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "config", required_argument, NULL, ARG_CONFIG },
		{ "root", required_argument, NULL, ARG_ROOT },
		{ "dry-run", no_argument, NULL, ARG_DRY_RUN },
		{ "log-level", required_argument, NULL, ARG_LOG_LEVEL },
		{ "restore-knob", no_argument, NULL, ARG_RESTORE_KNOB },
		{ "hand-back", no_argument, NULL, ARG_HAND_BACK },
		{}
	};
	int c, l;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("autosleepd %s\n", PACKAGE_VERSION);
			return 0;
		case ARG_CONFIG:
			arg_config = optarg;
			break;
		case ARG_ROOT:
			arg_root = optarg;
			break;
		case ARG_DRY_RUN:
			arg_dry_run = true;
			break;
		case ARG_RESTORE_KNOB:
			arg_restore_knob = true;
			break;
		case ARG_HAND_BACK:
			arg_hand_back = true;
			break;
		case ARG_LOG_LEVEL:
			l = log_level_from_string(optarg);
			if (l < 0)
				return log_error_errno(l, "Invalid log level '%s'", optarg);
			log_set_max_level(l);
			break;
		case '?':
			return -EINVAL;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc)
		return log_error_errno(-EINVAL, "Unexpected argument '%s'", argv[optind]);
	return 1;
}

static int run(int argc, char *argv[])
{
	_cleanup_(config_done) struct config config;
	_cleanup_free_ char *dropin = NULL;
	struct manager *m = NULL;
	int r;

	config_init(&config);
	log_set_ident("autosleepd");
	r = parse_argv(argc, argv);
	if (r <= 0)
		return r;

	r = sysfs_set_root(arg_root);
	if (r < 0)
		return log_error_errno(r, "Failed to set root: %m");

	/* After a stop or crash: the configuration does not matter, the saved value does. */
	if (arg_restore_knob) {
		_cleanup_free_ char *dir = manager_runtime_dir();
		/* The knob is this step's job; a check left armed is logged, and costs one failed suspend at most. */
		r = knob_restore_saved(dir);
		(void)hand_back_disarm();
		return r;
	}

	if (arg_config) {
		if (asprintf(&dropin, "%s.d", arg_config) < 0)
			return log_error_errno(-ENOMEM, "Out of memory");
		r = config_load(&config, arg_config, true, dropin);
	} else {
		r = config_load(&config, CONFIG_DEFAULT_PATH, false, CONFIG_DEFAULT_DROPIN_DIR);
	}
	if (r < 0 && arg_hand_back) {
		/* A broken configuration may be why the daemon failed: the default name is then the one in use. */
		log_warning("Invalid configuration: handing back the wake locks of the default name instead");
		config_done(&config);
		config_init(&config);
		r = 0;
	}
	if (r < 0)
		return log_error_errno(r, "Refusing to start with an invalid configuration");
	if (arg_hand_back) {
		r = hand_back(config.wake_lock_name);
		return r < 0 ? r : 0;
	}

	r = manager_new(&config, arg_dry_run, &m);
	if (r < 0)
		return log_error_errno(r, "Failed to allocate manager: %m");
	r = manager_startup(m);
	if (r >= 0)
		r = manager_run(m);
	manager_free(m);
	return r;
}

int main(int argc, char *argv[])
{
	int r = run(argc, argv);

	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

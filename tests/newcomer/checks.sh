# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced inside the fresh root by the script tests/newcomer/run.sh makes
# from the README: after_MARKER runs after the README block of that marker
# and prints TAP lines about what the README says that block did.

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
check() {
	local d=$1
	shift
	if "$@" > /dev/null 2>&1; then ok "$d"; else not_ok "$d"; fi
}
status_of() { dpkg-query -W -f='${Status}' "$1" 2> /dev/null || true; }

# What the README says the package holds, where it says.
package_files=(
	/usr/sbin/autosleepd
	/usr/bin/autosleepctl
	/lib/systemd/system/autosleepd.service
	/lib/systemd/system/autosleepd-hand-back.service
	/usr/share/dbus-1/system.d/org.autosleep1.conf
	/usr/share/dbus-1/system-services/org.autosleep1.service
	/usr/share/dbus-1/interfaces/org.autosleep1.Manager.xml
	/usr/share/polkit-1/actions/org.autosleep1.policy
	/usr/share/bash-completion/completions/autosleepctl
	/usr/share/man/man8/autosleepd.8.gz
	/etc/autosleep/autosleep.conf
)

after_package() {
	local deb=../autosleep_0.1_amd64.deb
	check "step 1 wrote $deb" [ -s $deb ]
	check "... a package named autosleep ($(dpkg-deb -f $deb Package Version 2>&1 | paste -sd' '))" \
		[ "$(dpkg-deb -f $deb Package)" = autosleep ]
	# The build ran with the profile: no test-suite dependency came in.
	local p st
	for p in libcmocka-dev dbus-daemon; do
		st=$(status_of $p)
		check "step 1 installed no $p, a dependency of the tests only (${st:-not installed})" \
			[ "$st" != "install ok installed" ]
	done
}

after_kernel() {
	# The block ran with --config-only: $kdeb is the merged .config.
	check "step 2's dependencies installed and Debian's config merged with our fragment ($kdeb)" \
		sh -c "[ -s '$kdeb' ] && grep -qx 'CONFIG_PM_SLEEP=y' '$kdeb'"
}

after_install() {
	check "apt installed autosleep from the local file (/var/log/apt/history.log)" \
		grep -q '^Commandline: apt install \.\./autosleep_0.1_amd64.deb' /var/log/apt/history.log
	check "autosleep is installed ($(status_of autosleep))" [ "$(status_of autosleep)" = "install ok installed" ]
	# Every dependency came from the archive: apt's own check finds none missing.
	check "apt-get check: every dependency is satisfied" apt-get check -q
	echo "# apt brought in: $(sed -n '/^Commandline: apt install \.\.\/autosleep/,/^End-Date/s/^Install: //p' /var/log/apt/history.log |
		tr ',' '\n' | grep -c 'automatic') packages with autosleep"
	local f
	for f in "${package_files[@]}"; do
		check "$f is installed" [ -e "$f" ]
	done
	check "/etc/autosleep/autosleep.conf is a conffile" \
		sh -c "dpkg-query -W -f='\${Conffiles}' autosleep | grep -q ' /etc/autosleep/autosleep.conf '"
	check "autosleepd --version runs: $(autosleepd --version 2>&1 | head -n1)" autosleepd --version
	check "installing did not enable autosleepd ($(systemctl is-enabled autosleepd.service 2>&1))" \
		[ "$(systemctl is-enabled autosleepd.service 2>&1)" = disabled ]
	check "installing did not start autosleepd" sh -c '! pgrep -x autosleepd'
	check "the kernel package is installed: ${kdeb##*/}" \
		sh -c "[ \"\$(dpkg-query -W -f='\${Status}' \$(dpkg-deb -f '$kdeb' Package))\" = 'install ok installed' ]"
	check "... and its kernel is in /boot" sh -c 'ls /boot/vmlinuz-*-autosleep*'
}

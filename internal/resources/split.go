package resources

// monotonicSplit keeps the user/system split of a CPU total from ever
// going back, as the kernel's cputime_adjust does for a task. The total is
// exact (the scheduler's nanoseconds); the split comes from tick samples
// and moves as they come in, so read twice it could take from user time
// what it gives to system time, and a step's user time would come out
// negative.
type monotonicSplit struct{ user, sys float64 }

func (m *monotonicSplit) adjust(user, sys float64) (float64, float64) {
	total := user + sys
	if total <= m.user+m.sys {
		return m.user, m.sys
	}
	sys = max(sys, m.sys)
	user = total - sys
	if user < m.user {
		user = m.user
		sys = total - user
	}
	m.user, m.sys = user, sys
	return user, sys
}

package studyimage

// What the tests of package studyimage_test, which deploy studies through
// the runner (itself a user of this package), read of its insides.
var (
	Within     = within
	PlanValues = planValues
	BasePATH   = basePATH
	Expand     = expand
	FirstJDK   = firstJDK
	Paths      = paths
)

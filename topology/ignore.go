package topology

import (
	"fmt"
	"slices"
	"sort"
)

// findingSeverity is the severity of every stable finding code.
var findingSeverity = map[string]Severity{
	CodeUnreachable: SeverityError, CodeSlow: SeverityError, CodeNotRedis: SeverityError, CodeAuthFailed: SeverityError, CodeReplica: SeverityError,
	CodeServerMode: SeverityError, CodeEvictionPolicy: SeverityError, CodePersistenceError: SeverityError,
	CodeReplicasAttached: SeverityWarning, CodeWeakPersistence: SeverityWarning, CodeFencingFsync: SeverityWarning,
	CodeDebugCommand: SeverityWarning, CodeClockOffset: SeverityWarning, CodeVulnerable: SeverityWarning,
	CodeKeysEvicted: SeverityWarning, CodeConfigDenied: SeverityWarning, CodeInfoDenied: SeverityWarning,
	CodeUnknownServer: SeverityWarning, CodeStartupSetting: SeverityWarning, CodeQuarantined: SeverityInfo,
}

// FindingCodes returns every stable finding code, sorted.
func FindingCodes() []string {
	out := make([]string, 0, len(findingSeverity))
	for c := range findingSeverity {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// ignores checks the ignore blocks: a known code of a warning or info finding
// (errors must be fixed, not acknowledged), a reason, and declared masters.
func (v *validator) ignores(c *Cluster) {
	for i, ig := range c.Ignores {
		f := Field{Block: BlockIgnore, Index: i}
		sev, known := findingSeverity[ig.Code]
		switch {
		case !known:
			v.errorf(fs(f), "Unknown finding code", "ignore %q: no finding has this code; the codes are: %v.", ig.Code, FindingCodes())
		case sev == SeverityError:
			v.errorf(fs(f), "Errors cannot be acknowledged", "ignore %q: %s is an error finding: the master must not be trusted with locks until it is fixed.", ig.Code, ig.Code)
		}
		if ig.Reason == "" {
			v.errorf(fs(Field{Block: BlockIgnore, Index: i, Attr: "reason"}), "Missing reason", "ignore %q: say why the finding is acceptable: reason = \"...\".", ig.Code)
		}
		for _, m := range ig.Masters {
			if !slices.ContainsFunc(c.Masters, func(x Master) bool { return x.Name == m }) {
				v.errorf(fs(Field{Block: BlockIgnore, Index: i, Attr: "masters"}), "Unknown master", "ignore %q names master %q, which the cluster does not declare.", ig.Code, m)
			}
		}
	}
}

// String describes an ignore for output: the reason and the masters it covers.
func (ig *Ignore) String() string {
	if len(ig.Masters) == 0 {
		return fmt.Sprintf("acknowledged: %s", ig.Reason)
	}
	return fmt.Sprintf("acknowledged on %v: %s", ig.Masters, ig.Reason)
}

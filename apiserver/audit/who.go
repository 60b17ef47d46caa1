package audit

import "strings"

// Who names a caller for people: a service account as sa:ns/name, kube's
// components and the in-process controllers by their user agent (they
// share the admin's credentials), anyone else by user name.
func Who(user, userAgent string) string {
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		if ns, name, ok := strings.Cut(rest, ":"); ok {
			return "sa:" + ns + "/" + name
		}
	}
	switch user {
	case "system:kube-scheduler", "system:kube-controller-manager":
		return strings.TrimPrefix(user, "system:")
	}
	product, detail, _ := strings.Cut(userAgent, "/")
	detail, _, _ = strings.Cut(detail, " ")
	switch product {
	case "kube-scheduler":
		return product
	case "kube-controller-manager", "devplane":
		// "kube-controller-manager/deployment-controller",
		// "devplane/garbage-collector": the controller; a version is not one.
		if detail != "" && !(detail[0] == 'v' && len(detail) > 1 && detail[1] >= '0' && detail[1] <= '9') {
			return detail
		}
		return product
	}
	return user
}

// MatchesUser reports whether a filter on user picks a caller: its user
// name, its Who, or its Who as kube's component user (system:kube-scheduler
// picks the scheduler devplane runs in-process).
func MatchesUser(filter, user, userAgent string) bool {
	if filter == user {
		return true
	}
	who := Who(user, userAgent)
	return filter == who || filter == "system:"+who
}

package audit

import "strings"

// Who names a caller for people: a service account as sa:ns/name, kube's
// components and devplane's controllers by their user agent (they share
// the admin's credentials), anyone else by user name and the program its
// user agent names ("devplane-admin (kubectl)"), since local tools and
// controllers under development often share one kubeconfig.
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
	product, detail := agent(userAgent)
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
	case "":
		return user
	}
	return user + " (" + product + ")"
}

// agent splits a user agent's first word into its program and what
// follows the first slash: "kubectl/v1.32.4 (linux/amd64)" is kubectl and
// v1.32.4.
func agent(userAgent string) (product, detail string) {
	first, _, _ := strings.Cut(userAgent, " ")
	product, detail, _ = strings.Cut(first, "/")
	return product, detail
}

// MatchesUser reports whether a filter on user picks a caller: its user
// name, its Who, its Who as kube's component user (system:kube-scheduler
// picks the scheduler devplane runs in-process) or its program.
func MatchesUser(filter, user, userAgent string) bool {
	if filter == user {
		return true
	}
	if product, _ := agent(userAgent); filter == product {
		return true
	}
	who := Who(user, userAgent)
	return filter == who || filter == "system:"+who
}

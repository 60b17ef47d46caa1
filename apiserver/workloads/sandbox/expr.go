package sandbox

import (
	"errors"
	"strconv"
)

// cmdExpr evaluates an expression of its operands as busybox's expr: |, &,
// comparisons, + -, * / % by precedence (integers, else strings compared),
// parentheses, and "length STRING". It prints the value and exits 1 when
// it is 0 or empty, 2 on a bad expression.
func cmdExpr(c *command, args []string) int {
	e := &exprParser{args: args}
	v, err := e.or()
	if err == nil && e.pos < len(args) {
		err = errors.New("syntax error")
	}
	if err != nil {
		c.errorf("%s", err.Error())
		return 2
	}
	if code := c.writeOut(v + "\n"); code != 0 {
		return 3
	}
	if v == "" || v == "0" {
		return 1
	}
	return 0
}

type exprParser struct {
	args []string
	pos  int
}

func (e *exprParser) peek() string {
	if e.pos < len(e.args) {
		return e.args[e.pos]
	}
	return ""
}

func exprNull(v string) bool { return v == "" || v == "0" }

func exprBool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (e *exprParser) or() (string, error) {
	l, err := e.and()
	for err == nil && e.peek() == "|" {
		e.pos++
		var r string
		if r, err = e.and(); err == nil && exprNull(l) {
			l = r
			if exprNull(r) {
				l = "0"
			}
		}
	}
	return l, err
}

func (e *exprParser) and() (string, error) {
	l, err := e.compare()
	for err == nil && e.peek() == "&" {
		e.pos++
		var r string
		if r, err = e.compare(); err == nil && (exprNull(l) || exprNull(r)) {
			l = "0"
		}
	}
	return l, err
}

func (e *exprParser) compare() (string, error) {
	l, err := e.sum()
	for err == nil {
		op := e.peek()
		if op != "=" && op != "!=" && op != "<" && op != "<=" && op != ">" && op != ">=" {
			break
		}
		e.pos++
		var r string
		if r, err = e.sum(); err != nil {
			break
		}
		cmp := 0
		li, lerr := strconv.ParseInt(l, 10, 64)
		ri, rerr := strconv.ParseInt(r, 10, 64)
		switch {
		case lerr == nil && rerr == nil && li < ri, (lerr != nil || rerr != nil) && l < r:
			cmp = -1
		case lerr == nil && rerr == nil && li > ri, (lerr != nil || rerr != nil) && l > r:
			cmp = 1
		}
		l = exprBool(map[string]bool{"=": cmp == 0, "!=": cmp != 0, "<": cmp < 0, "<=": cmp <= 0, ">": cmp > 0, ">=": cmp >= 0}[op])
	}
	return l, err
}

func (e *exprParser) sum() (string, error) {
	return e.arith(e.product, "+", "-")
}

func (e *exprParser) product() (string, error) {
	return e.arith(e.primary, "*", "/", "%")
}

// arith applies integer operators ops left to right over operands next
// parses.
func (e *exprParser) arith(next func() (string, error), ops ...string) (string, error) {
	l, err := next()
	for err == nil {
		op := e.peek()
		found := false
		for _, o := range ops {
			found = found || op == o
		}
		if !found {
			break
		}
		e.pos++
		var r string
		if r, err = next(); err != nil {
			break
		}
		li, lerr := strconv.ParseInt(l, 10, 64)
		ri, rerr := strconv.ParseInt(r, 10, 64)
		if lerr != nil || rerr != nil {
			return "", errors.New("non-numeric argument")
		}
		switch op {
		case "+":
			li += ri
		case "-":
			li -= ri
		case "*":
			li *= ri
		case "/", "%":
			if ri == 0 {
				return "", errors.New("division by zero")
			}
			if op == "/" {
				li /= ri
			} else {
				li %= ri
			}
		}
		l = strconv.FormatInt(li, 10)
	}
	return l, err
}

func (e *exprParser) primary() (string, error) {
	if e.pos >= len(e.args) {
		return "", errors.New("syntax error")
	}
	tok := e.args[e.pos]
	e.pos++
	switch {
	case tok == "(":
		v, err := e.or()
		if err != nil {
			return "", err
		}
		if e.peek() != ")" {
			return "", errors.New("syntax error")
		}
		e.pos++
		return v, nil
	case tok == "length" && e.pos < len(e.args):
		e.pos++
		return strconv.Itoa(len(e.args[e.pos-1])), nil
	}
	return tok, nil
}

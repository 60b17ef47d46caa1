package admission

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

// celVariables are the variables admission expressions see, as in kube;
// authorizer (and authorizer.requestResource) is bound where the request's
// user and an authorizer are known.
var celVariables = []string{"object", "oldObject", "request", "params", "namespaceObject", "variables"}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	celCache   sync.Map // expression → cel.Program or error
)

// env is kube's CEL environment for admission expressions: its base
// libraries at the version devplane speaks (Kubernetes' lists, regex, URL,
// quantity, IP, CIDR, format, semver and authorizer functions, CEL's
// strings, sets and lists extensions), and the admission variables.
func env() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		base, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.StoredExpressions)
		if err != nil {
			celEnvErr = err
			return
		}
		opts := []cel.EnvOption{
			// Mutating policies build Object{...} and JSONPatch{...} values.
			cel.CustomTypeProvider(mutationTypes{base.CELTypeProvider()}),
			cel.Function("jsonpatch.escapeKey", cel.Overload("jsonpatch_escapeKey_string", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					s, ok := v.Value().(string)
					if !ok {
						return types.NewErr("jsonpatch.escapeKey takes a string")
					}
					return types.String(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
				}))),
			cel.Variable("authorizer", library.AuthorizerType),
			cel.Variable("authorizer.requestResource", library.ResourceCheckType),
		}
		for _, v := range celVariables {
			opts = append(opts, cel.Variable(v, cel.DynType))
		}
		celEnv, celEnvErr = base.Extend(opts...)
	})
	return celEnv, celEnvErr
}

type compiled struct {
	prg cel.Program
	err error
}

// compile compiles (once) a CEL expression over the admission variables.
func compile(expr string) (cel.Program, error) {
	if c, ok := celCache.Load(expr); ok {
		return c.(compiled).prg, c.(compiled).err
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	var c compiled
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		c.err = fmt.Errorf("compilation failed: %v", iss.Err())
	} else {
		c.prg, c.err = e.Program(ast, cel.CostLimit(celconfig.PerCallLimit), cel.CostTracking(&library.CostEstimator{}))
	}
	celCache.Store(expr, c)
	return c.prg, c.err
}

// evalCEL evaluates expr with vars; missing variables are null.
func evalCEL(expr string, vars map[string]any) (ref.Val, error) {
	prg, err := compile(expr)
	if err != nil {
		return nil, err
	}
	act := map[string]any{}
	for _, v := range celVariables {
		act[v] = types.NullValue
	}
	for k, v := range vars {
		if v != nil {
			act[k] = v
		}
	}
	out, _, err := prg.Eval(act)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// evalBool evaluates a boolean expression.
func evalBool(expr string, vars map[string]any) (bool, error) {
	out, err := evalCEL(expr, vars)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("expression '%s' must evaluate to bool, got %v", expr, out.Type())
	}
	return b, nil
}

// toCEL turns an object into the map CEL sees (nil stays nil).
func toCEL(obj any) any {
	if obj == nil {
		return nil
	}
	if ro, ok := obj.(runtime.Object); ok {
		if ro == nil || isNilObject(ro) {
			return nil
		}
		if u, ok := ro.(runtime.Unstructured); ok {
			return u.UnstructuredContent()
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	return m
}

func isNilObject(o runtime.Object) bool {
	if o == nil {
		return true
	}
	v := reflect.ValueOf(o)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

package admission

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/runtime"
)

// celVariables are the variables admission expressions see, as in kube
// (authorizer is not offered).
var celVariables = []string{"object", "oldObject", "request", "params", "namespaceObject", "variables"}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	celCache   sync.Map // expression → cel.Program or error
)

func env() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		opts := []cel.EnvOption{ext.Strings(), ext.Sets(), ext.Lists(), ext.Math(), ext.Encoders(),
			// Mutating policies build Object{...} and JSONPatch{...} values.
			cel.CustomTypeProvider(mutationTypes{baseRegistry()}),
			cel.Function("jsonpatch.escapeKey", cel.Overload("jsonpatch_escapeKey_string", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(func(v ref.Val) ref.Val {
					s, ok := v.Value().(string)
					if !ok {
						return types.NewErr("jsonpatch.escapeKey takes a string")
					}
					return types.String(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
				})))}
		for _, v := range celVariables {
			opts = append(opts, cel.Variable(v, cel.DynType))
		}
		celEnv, celEnvErr = cel.NewEnv(opts...)
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
		c.prg, c.err = e.Program(ast, cel.CostLimit(1_000_000))
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

// baseRegistry is CEL's standard type registry, under the mutation types.
func baseRegistry() types.Provider {
	r, err := types.NewRegistry()
	if err != nil {
		panic(err) // only with bad arguments, and there are none
	}
	return r
}

// Package celcompile checks admission CEL expressions (webhook match
// conditions, admission policies' expressions) the way kube's validation
// of their configurations does: compiled with kube-apiserver's own
// environment (typed request and namespaceObject, authorizer, kube's
// libraries), so an expression that would never compile is refused when
// it is written rather than failing each request later. It holds no
// evaluation: admission runs expressions itself.
package celcompile

import (
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

var (
	compilerOnce sync.Once
	compiler     plugincel.Compiler
)

func stateless() plugincel.Compiler {
	compilerOnce.Do(func() {
		compiler = plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return compiler
}

// expression is one expression and the types it may evaluate to.
type expression struct {
	expr    string
	returns []*cel.Type
}

func (e expression) GetExpression() string    { return e.expr }
func (e expression) ReturnTypes() []*cel.Type { return e.returns }

// Policy checks one admission policy's expressions in order: its
// variables first, which the expressions after them may name.
type Policy struct {
	compiler  plugincel.Compiler
	hasParams bool
}

// NewPolicy starts the checks of a policy with params (a paramKind) when
// hasParams, and variables when hasVariables.
func NewPolicy(hasParams, hasVariables bool) *Policy {
	c := stateless()
	if hasVariables {
		// Composition keeps each compiled variable for the later
		// expressions, so one compiler serves one policy.
		if composited, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())); err == nil {
			c = composited
		}
	}
	return &Policy{compiler: c, hasParams: hasParams}
}

// Variable checks a variable's expression and declares it for the rest.
func (p *Policy) Variable(name, expr string, fldPath *field.Path) *field.Error {
	composited, ok := p.compiler.(*plugincel.CompositedCompiler)
	if !ok {
		return field.InternalError(fldPath, fmt.Errorf("variable composition is not allowed"))
	}
	v := variable{expression{expr, []*cel.Type{cel.AnyType}}, name}
	result := composited.CompileAndStoreVariable(v, p.declarations(), environment.NewExpressions)
	return fieldError(result.Error, expr, fldPath)
}

// Condition checks a policy's boolean expression.
func (p *Policy) Condition(expr string, fldPath *field.Path) *field.Error {
	return p.check(expression{expr, []*cel.Type{cel.BoolType}}, fldPath)
}

// Message checks a policy's message expression, which must evaluate to a
// string.
func (p *Policy) Message(expr string, fldPath *field.Path) *field.Error {
	return p.check(expression{expr, []*cel.Type{cel.StringType}}, fldPath)
}

// ApplyConfiguration checks a mutating policy's applyConfiguration
// expression, which builds an Object{...}.
func (p *Policy) ApplyConfiguration(expr string, fldPath *field.Path) *field.Error {
	return p.checkMutation(expression{expr, []*cel.Type{types.NewObjectType("Object")}}, fldPath)
}

// JSONPatch checks a mutating policy's jsonPatch expression, a list of
// JSONPatch{...}.
func (p *Policy) JSONPatch(expr string, fldPath *field.Path) *field.Error {
	return p.checkMutation(expression{expr, []*cel.Type{cel.ListType(types.NewObjectType("JSONPatch"))}}, fldPath)
}

func (p *Policy) declarations() plugincel.OptionalVariableDeclarations {
	return plugincel.OptionalVariableDeclarations{HasParams: p.hasParams, HasAuthorizer: true}
}

func (p *Policy) check(e expression, fldPath *field.Path) *field.Error {
	result := p.compiler.CompileCELExpression(e, p.declarations(), environment.NewExpressions)
	return fieldError(result.Error, e.expr, fldPath)
}

// checkMutation compiles with the Object and JSONPatch types declared.
func (p *Policy) checkMutation(e expression, fldPath *field.Path) *field.Error {
	decls := p.declarations()
	decls.HasPatchTypes = true
	result := p.compiler.CompileCELExpression(e, decls, environment.NewExpressions)
	return fieldError(result.Error, e.expr, fldPath)
}

type variable struct {
	expression
	name string
}

func (v variable) GetName() string { return v.name }

// Condition checks a boolean expression (a match condition, a policy's
// validation) with params declared when hasParams, and returns kube's
// error on fldPath ("compilation failed: ...", "must evaluate to bool
// but got ...") or nil.
func Condition(expr string, hasParams bool, fldPath *field.Path) *field.Error {
	return check(expression{expr, []*cel.Type{cel.BoolType}}, hasParams, fldPath)
}

// Message checks a message expression, which must evaluate to a string.
func Message(expr string, hasParams bool, fldPath *field.Path) *field.Error {
	return check(expression{expr, []*cel.Type{cel.StringType}}, hasParams, fldPath)
}

func check(e expression, hasParams bool, fldPath *field.Path) *field.Error {
	return (&Policy{compiler: stateless(), hasParams: hasParams}).check(e, fldPath)
}

// fieldError words a compilation error as kube's validation does.
func fieldError(err *apiservercel.Error, expr string, fldPath *field.Path) *field.Error {
	if err == nil {
		return nil
	}
	switch err.Type {
	case apiservercel.ErrorTypeRequired:
		return field.Required(fldPath, err.Detail)
	case apiservercel.ErrorTypeInvalid:
		return field.Invalid(fldPath, expr, err.Detail)
	}
	return field.InternalError(fldPath, err)
}

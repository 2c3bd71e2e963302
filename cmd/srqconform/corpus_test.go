package main

import (
	"testing"

	"github.com/srqconform/srqconform/conformance"
	"github.com/srqconform/srqconform/corpus"
	"github.com/srqconform/srqconform/model"
	"github.com/stretchr/testify/assert"
)

func TestCorpusReadsEveryKindOfVerdict(t *testing.T) {
	suite := `{"driver": "cgo", "profile": "rxe", "device": {"Kernel": "6.12.118+deb13-amd64"},
		"rules": [{"rule": {"id": "QP-LAST-WQE"}, "status": "fail"}, {"rule": {"id": "CREATE-ATTR"}, "status": "fail"}],
		"failures": [{"rule": "QP-LAST-WQE"}, {"rule": "CREATE-ATTR"}, {"rule": "QP-LAST-WQE"}]}`
	var r corpus.Result
	readVerdict(&r, []byte(suite), "sequential", nil)
	assert.True(t, r.Caught)
	assert.Equal(t, "QP-LAST-WQE", r.Blamed, "the first counterexample's rule")
	assert.Equal(t, []model.RuleID{model.RuleQPLastWQE, model.RuleCreateAttr}, r.Failing)
	assert.Equal(t, "6.12.118+deb13-amd64", r.Kernel)

	r = corpus.Result{}
	readVerdict(&r, []byte(suite), "sequential", conformance.Known{model.RuleQPLastWQE: "intermittent on 6.12"})
	assert.Equal(t, "CREATE-ATTR", r.Blamed, "a known rule is not the blame")

	r = corpus.Result{}
	readVerdict(&r, []byte(suite), "sequential", conformance.Known{model.RuleQPLastWQE: "x", model.RuleCreateAttr: "y"})
	assert.False(t, r.Caught, "only known rules failed")

	crash := `{"finding": {"kind": "kernel crash", "headline": "BUG: kernel NULL pointer dereference", "function": "rxe_srq_chk_attr", "verb": "modify_srq"}, "kernel": "7.2.13+deb14-amd64"}`
	r = corpus.Result{}
	readVerdict(&r, []byte(crash), "sequential", nil)
	assert.True(t, r.Caught)
	assert.Equal(t, corpus.KernelCrash, r.Blamed)
	assert.Contains(t, r.Detail, "during modify_srq")

	conc := `{"profile": "rxe", "kernel": "6.12", "runs": [{"seed": 1, "result": {"verdict": "linearizable"}}, {"seed": 2, "result": {"verdict": "violation", "rule": "FETCH-ONCE"}}]}`
	r = corpus.Result{}
	readVerdict(&r, []byte(conc), "concurrent", nil)
	assert.True(t, r.Caught)
	assert.Equal(t, "FETCH-ONCE", r.Blamed)

	r = corpus.Result{}
	readVerdict(&r, []byte(`{"profile": "rxe", "runs": [{"seed": 1, "result": {"verdict": "linearizable"}}]}`), "concurrent", nil)
	assert.False(t, r.Caught)
}

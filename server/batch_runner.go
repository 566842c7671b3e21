package server

import (
	"context"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
)

// The batches' runner lives in package batch, over a Server: POST /v1/batches and the web UI
// reach it as a BatchRunner, and it acts on the runs through the Server's methods and reads
// them through what this file exposes.

// BatchRunner runs the batches of one serve (package batch's Runner). Its errors are *api.Error.
type BatchRunner interface {
	// Create accepts a batch, or answers the batch a resent request with its id was accepted
	// as (created false).
	Create(req api.BatchRequest) (bt api.Batch, created bool, err error)
	Get(id string) (api.Batch, error)
	List() []api.Batch // newest first
	// Cancel stops a running batch; a closed one is answered as it is.
	Cancel(id string) (api.Batch, error)
	// Runs says whether the runner carries out operation op (a BatchOp*).
	Runs(op string) bool
}

// ClusterBatches is a Cluster that runs batches itself (Temporal's batch operations, durable
// on the cluster, which act on each execution once at the batch's pace). The runner checks
// the request and fixes the set of runs; the cluster acts on them and keeps the progress.
// Errors are *api.Error, as Cluster's.
type ClusterBatches interface {
	// StartBatch starts acting on runs (all open) for bt, whose ID, Request, Matched, Total
	// and Skipped are set, and returns bt with the cluster's state. An id already started
	// answers CodeIDTaken.
	StartBatch(ctx context.Context, bt api.Batch, runs []history.Run) (api.Batch, error)
	// Batch returns batch id's state: its status, progress and what of its request the
	// cluster records (the operation and the reason).
	Batch(ctx context.Context, id string) (api.Batch, error)
	// Batches returns the batches the cluster keeps, newest first.
	Batches(ctx context.Context) ([]api.Batch, error)
	// StopBatch stops batch id; the runs not yet acted on are left alone.
	StopBatch(ctx context.Context, id string) (api.Batch, error)
}

// Drives says whether an engine of this process drives the runs (New with an engine), so
// they can be acted on here.
func (s *Server) Drives() bool { return s.eng != nil }

// Store is the store the runs are read from (nil over a cluster).
func (s *Server) Store() history.Store { return s.store }

// Cluster is where the runs live when no engine of this process drives them (Over), else nil.
func (s *Server) Cluster() Cluster { return s.cluster }

// Purger is the store as a Purger, or the error naming why it cannot purge (what is the
// act refused: "purge runs").
func (s *Server) Purger(what string) (Purger, error) { return s.purger(what) }

// CheckSearchFields refuses conditions on search fields no run has (a CodeBadRequest error
// naming the fields there are), as List does when it finds no run.
func (s *Server) CheckSearchFields(conds []history.SearchCond) error {
	return s.checkSearchFields(conds)
}

// AsError turns an engine or store error into an *Error with its code, keeping its text.
func AsError(err error) *api.Error { return wrap(err) }

// Unsupported is the error of an act on a database no engine of this process drives.
func Unsupported(what string) *api.Error { return unsupported(what) }

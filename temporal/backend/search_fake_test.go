package backend

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"google.golang.org/grpc"
)

// fakeOperator answers ListSearchAttributes from a table; any other call panics.
type fakeOperator struct {
	operatorservice.OperatorServiceClient
	attrs map[string]enumspb.IndexedValueType
	err   error
}

func (o fakeOperator) ListSearchAttributes(context.Context, *operatorservice.ListSearchAttributesRequest, ...grpc.CallOption) (*operatorservice.ListSearchAttributesResponse, error) {
	if o.err != nil {
		return nil, o.err
	}
	return &operatorservice.ListSearchAttributesResponse{CustomAttributes: o.attrs}, nil
}

package csi

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// cloudError answers a provider's error with the CSI code it means, the
// call's verb and the object in the message. A provider may also return
// a gRPC status of its own, which is passed on as it is.
func cloudError(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if s, ok := status.FromError(err); ok {
		return status.Errorf(s.Code(), "%s: %s", what, s.Message())
	}
	return status.Errorf(codeOf(err), "%s: %v", what, err)
}

// codeOf is the CSI code of a provider's error.
func codeOf(err error) codes.Code {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, ErrPending):
		// "Operation pending for volume": the caller retries later.
		return codes.Aborted
	case errors.Is(err, ErrAttachedElsewhere), errors.Is(err, ErrInUse):
		return codes.FailedPrecondition
	case errors.Is(err, ErrLimit):
		return codes.ResourceExhausted
	case errors.Is(err, ErrUnsupported):
		return codes.InvalidArgument
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrNodeNotFound):
		return codes.NotFound
	}
	return codes.Internal
}

// isNotFound reports whether the cloud said the object is not there.
func isNotFound(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrNodeNotFound)
}

func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

func missing(field string) error { return invalid("%s is required", field) }

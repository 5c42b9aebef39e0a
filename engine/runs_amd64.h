// RUNS16 leaves bit b of X set when bits b to b+15 of X were (16 base64
// bytes from byte b of a block, given X's mask of them), in four shifts
// that spoil T, and sets the flags on the result.
#define RUNS16(X, T) \
	MOVQ  X, T \
	SHRQ  $1, T \
	ANDQ  T, X \
	MOVQ  X, T \
	SHRQ  $2, T \
	ANDQ  T, X \
	MOVQ  X, T \
	SHRQ  $4, T \
	ANDQ  T, X \
	MOVQ  X, T \
	SHRQ  $8, T \
	ANDQ  T, X \
	TESTQ X, X

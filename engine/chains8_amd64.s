//go:build !purego

#include "textflag.h"

// STEP advances one chain: its row offset in R by the column byte at
// ADDR, through the table at R11. Every entry is a row offset and every
// column below k (TestAutomatonRowsInRange, TestMapCols), so row+column
// indexes the table.
#define STEP(ADDR, R) \
	MOVBLZX ADDR, R10 \
	ADDL    R, R10 \
	MOVL    (R11)(R10*4), R

// func walk8(p *byte, q, n int, delta *uint32, mask uint32, rows *[8]uint32) int
//
// Steps eight chains over column bytes: chain j reads p[j*q+i] for i from
// 0, until n steps are done or a step leaves some chain in a state with
// outputs (a row with a bit of mask set), and returns the steps done; the
// rows are read from and written back to *rows. One step is three
// instructions a chain (two loads, of which only the transition waits on
// the chain), and the eight chains' loads overlap.
TEXT ·walk8(SB), NOSPLIT, $0-56
	MOVQ p+0(FP), R12
	MOVQ q+8(FP), R14
	MOVQ n+16(FP), R10
	MOVQ delta+24(FP), R11
	LEAQ (R14)(R14*2), R15
	LEAQ (R12)(R14*4), R13
	ADDQ R12, R10
	MOVQ R10, n+16(FP) // the end of chain 0's steps
	MOVQ R12, ret+48(FP) // where chain 0 began
	MOVQ rows+40(FP), R10
	MOVL 0(R10), AX
	MOVL 4(R10), BX
	MOVL 8(R10), CX
	MOVL 12(R10), DX
	MOVL 16(R10), SI
	MOVL 20(R10), DI
	MOVL 24(R10), R8
	MOVL 28(R10), R9
	CMPQ R12, n+16(FP)
	JAE  done

loop:
	STEP((R12), AX)
	STEP((R12)(R14*1), BX)
	STEP((R12)(R14*2), CX)
	STEP((R12)(R15*1), DX)
	STEP((R13), SI)
	STEP((R13)(R14*1), DI)
	STEP((R13)(R14*2), R8)
	STEP((R13)(R15*1), R9)
	INCQ R12
	INCQ R13
	MOVL AX, R10
	ORL  BX, R10
	ORL  CX, R10
	ORL  DX, R10
	ORL  SI, R10
	ORL  DI, R10
	ORL  R8, R10
	ORL  R9, R10
	TESTL mask+32(FP), R10
	JNZ  done
	CMPQ R12, n+16(FP)
	JB   loop

done:
	MOVQ rows+40(FP), R10
	MOVL AX, 0(R10)
	MOVL BX, 4(R10)
	MOVL CX, 8(R10)
	MOVL DX, 12(R10)
	MOVL SI, 16(R10)
	MOVL DI, 20(R10)
	MOVL R8, 24(R10)
	MOVL R9, 28(R10)
	SUBQ ret+48(FP), R12
	MOVQ R12, ret+48(FP)
	RET

//go:build !purego

#include "textflag.h"

// STOPS sets each byte of OUT to 0xFF where IN's byte is a stop byte, with
// the bytes 0x1F, '"' and '\\' broadcast in Y1 to Y3 (T1 and T2 spoiled).
#define STOPS(IN, OUT, T1, T2) \
	VPMINUB  Y1, IN, OUT \
	VPCMPEQB IN, OUT, OUT \
	VPCMPEQB Y2, IN, T1 \
	VPCMPEQB Y3, IN, T2 \
	VPOR     T1, OUT, OUT \
	VPOR     T2, OUT, OUT

// func plainAVX2(b []byte) int
//
// A byte stops the scan when it is '"', '\\' or at most 0x1F. The last
// test is unsigned, min(c, 0x1F) == c, since the signed VPCMPGTB would
// take the plain bytes from 0x80 for controls. The loop tests 64 bytes a
// step, with one branch on the OR of the two blocks' masks; a lone last
// 32-byte block is tested on its own.
TEXT ·plainAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	ANDQ $~31, CX // whole blocks only
	XORQ AX, AX

	// VMOVD, not MOVQ: MOVQ assembles to a legacy SSE instruction, and that
	// one instruction among the AVX ones made each call about 250 ns slower
	// on the AVX-512 Xeon virtual machine this was measured on, longer
	// than the scan of 4 KiB.
	MOVL         $0x1F, DX
	VMOVD        DX, X1
	VPBROADCASTB X1, Y1
	MOVL         $0x22, DX // '"'
	VMOVD        DX, X2
	VPBROADCASTB X2, Y2
	MOVL         $0x5C, DX // '\\'
	VMOVD        DX, X3
	VPBROADCASTB X3, Y3

loop64:
	LEAQ     64(AX), DX
	CMPQ     DX, CX
	JA       tail32
	VMOVDQU  (SI)(AX*1), Y4
	VMOVDQU  32(SI)(AX*1), Y5
	STOPS(Y4, Y6, Y7, Y8)
	STOPS(Y5, Y9, Y10, Y11)
	VPOR     Y6, Y9, Y10
	VPTEST   Y10, Y10
	JNZ      found64
	MOVQ     DX, AX
	JMP      loop64

found64:
	// One 64-bit mask with the first block's bits low: its lowest set bit
	// is the first stop byte's.
	VPMOVMSKB Y6, DX
	VPMOVMSKB Y9, BX
	SHLQ      $32, BX
	ORQ       BX, DX
	BSFQ      DX, DX
	ADDQ      DX, AX
	VZEROUPPER
	MOVQ      AX, ret+24(FP)
	RET

tail32:
	CMPQ      AX, CX
	JAE       done
	VMOVDQU   (SI)(AX*1), Y4
	STOPS(Y4, Y6, Y7, Y8)
	VPMOVMSKB Y6, DX
	TESTL     DX, DX
	JNZ       found32
	ADDQ      $32, AX

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

found32:
	BSFL       DX, DX
	ADDQ       DX, AX
	VZEROUPPER
	MOVQ       AX, ret+24(FP)
	RET

// func asciiAVX2(b []byte) int
//
// How many of b's bytes, in whole 32-byte blocks from the start, precede
// the first block with a byte from 0x80 up (all the whole blocks when none
// has one): the OR of 64 bytes a step, one test of its high bits per step.
TEXT ·asciiAVX2(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	ANDQ $~31, CX
	XORQ AX, AX

aloop64:
	LEAQ      64(AX), DX
	CMPQ      DX, CX
	JA        atail32
	VMOVDQU   (SI)(AX*1), Y4
	VPOR      32(SI)(AX*1), Y4, Y4
	VPMOVMSKB Y4, BX
	TESTL     BX, BX
	JNZ       adone
	MOVQ      DX, AX
	JMP       aloop64

atail32:
	CMPQ      AX, CX
	JAE       adone
	VMOVDQU   (SI)(AX*1), Y4
	VPMOVMSKB Y4, BX
	TESTL     BX, BX
	JNZ       adone
	MOVQ      CX, AX

adone:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func plainAVX512(b []byte) (n int, high bool)
//
// plainAVX2 with AVX-512 BW, 64 bytes a register, that also tells whether
// a byte from 0x80 up precedes the first stop byte: the literal's bytes
// then need utf8.Valid, and otherwise no second pass (llmreq). Plain bytes
// are ORed; a stop's block has its high bits below the stop tested.
TEXT ·plainAVX512(SB), NOSPLIT, $0-33
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), CX
	ANDQ $~63, CX // whole blocks only
	XORQ AX, AX
	VPXORQ Z4, Z4, Z4 // the plain blocks' bytes, ORed

	MOVL         $0x1F, DX
	VPBROADCASTB DX, Z1
	MOVL         $0x22, DX // '"'
	VPBROADCASTB DX, Z2
	MOVL         $0x5C, DX // '\\'
	VPBROADCASTB DX, Z3

loop512:
	CMPQ      AX, CX
	JAE       done512
	VMOVDQU64 (SI)(AX*1), Z0
	VPCMPUB   $2, Z1, Z0, K1 // c <= 0x1F
	VPCMPEQB  Z2, Z0, K2
	VPCMPEQB  Z3, Z0, K3
	KORQ      K1, K2, K1
	KORQ      K1, K3, K1
	KORTESTQ  K1, K1
	JNZ       found512
	VPORQ     Z0, Z4, Z4
	ADDQ      $64, AX
	JMP       loop512

found512:
	// The stop's offset, and the high bytes before it.
	KMOVQ    K1, DX
	TZCNTQ   DX, DX
	ADDQ     DX, AX
	VPMOVB2M Z0, K4
	KMOVQ    K4, BX
	BZHIQ    DX, BX, BX
	VPMOVB2M Z4, K5
	KMOVQ    K5, DX
	ORQ      DX, BX
	SETNE    high+32(FP)
	MOVQ     AX, n+24(FP)
	VZEROUPPER
	RET

done512:
	VPMOVB2M Z4, K5
	KORTESTQ K5, K5
	SETNE    high+32(FP)
	MOVQ     AX, n+24(FP)
	VZEROUPPER
	RET

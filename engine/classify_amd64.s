#include "textflag.h"

// RUNS16 leaves bit b of AX set when bits b to b+15 of AX were, in four
// shifts (CX is spoiled), and sets the flags on the result.
#define RUNS16 \
	MOVQ  AX, CX \
	SHRQ  $1, CX \
	ANDQ  CX, AX \
	MOVQ  AX, CX \
	SHRQ  $2, CX \
	ANDQ  CX, AX \
	MOVQ  AX, CX \
	SHRQ  $4, CX \
	ANDQ  CX, AX \
	MOVQ  AX, CX \
	SHRQ  $8, CX \
	ANDQ  CX, AX \
	TESTQ AX, AX

// func classifyVBMI(pos []int32, raw []byte, from, run, tok int) (n, end, runOut, tokOut int, ascii, pct bool)
//
// One VPERMI2B looks up the unitFlags of a block's 64 bytes (its two
// registers hold the table's 128 entries), and VPTESTMB turns each flag
// into a mask: the leetspeak characters, whose positions are written as
// leetAVX2 writes them, and the base64 bytes, whose runs are followed as
// tokenSkipAVX512 follows them until one is 16 long. The flags of every
// block are ORed, for the '%' at the end.
//
// Registers: SI raw, R12 the block's position, DX the end of the whole
// blocks, R11 the end of raw, DI the next position's place, R13 the last
// place with room for 64, R8 the base64 bytes that end the blocks before,
// R14 the first token's start (-1: none yet), R9 and R10 the high and low
// bits of each byte of a word, CX the bytes of the block read before (the
// tail's).
TEXT ·classifyVBMI(SB), NOSPLIT, $0-106
	MOVQ pos_base+0(FP), DI
	MOVQ pos_len+8(FP), R13
	LEAQ -256(DI)(R13*4), R13
	MOVQ raw_base+24(FP), SI
	MOVQ raw_len+32(FP), R11
	MOVQ from+48(FP), R12
	MOVQ run+56(FP), R8
	MOVQ tok+64(FP), R14
	VPXORQ Z11, Z11, Z11 // the flags seen
	CMPQ R11, $64
	JB   done
	MOVQ R11, DX
	SUBQ R12, DX
	ANDQ $-64, DX
	ADDQ R12, DX

	MOVQ      $0x0101010101010101, R10
	MOVQ      $0x8080808080808080, R9
	VMOVDQU64 ·unitFlags+0(SB), Z6
	VMOVDQU64 ·unitFlags+64(SB), Z7
	MOVL      $0x01010101, AX // fLeet
	VPBROADCASTD AX, Z8
	MOVL      $0x02020202, AX // fB64
	VPBROADCASTD AX, Z9

loop:
	CMPQ      R12, DX
	JAE       tail
	VMOVDQU64 (SI)(R12*1), Z0
	XORL      CX, CX

block:
	VPMOVB2M  Z0, K1
	KORTESTQ  K1, K1
	JNZ       notASCII
	VPERMI2B  Z7, Z6, Z0
	VPORQ     Z0, Z11, Z11
	VPTESTMB  Z8, Z0, K2
	KMOVQ     K2, AX
	SHRQ      CX, AX
	TESTQ     AX, AX
	JZ        tokens
	CMPQ      DI, R13
	JGT       done

bits:
	TZCNTQ AX, BX
	ADDQ   R12, BX
	MOVL   BX, (DI)
	ADDQ   $4, DI
	BLSRQ  AX, AX
	JNZ    bits

tokens:
	TESTQ    R14, R14
	JNS      next
	VPTESTMB Z9, Z0, K3
	KMOVQ    K3, BX
	SHRQ     CX, BX

	// A run from the blocks before that the block's first bytes make 16
	// long.
	MOVQ   BX, AX
	NOTQ   AX
	TZCNTQ AX, AX
	ADDQ   R8, AX
	CMPQ   AX, $16
	JAE    before

	// No whole group of 8 base64 bytes: no run starts here.
	MOVQ BX, AX
	NOTQ AX
	SUBQ R10, AX
	ANDQ BX, AX
	ANDQ R9, AX
	JZ   carry

	MOVQ BX, AX
	RUNS16
	JNZ  inside

carry:
	// The base64 bytes that end the block (not all 64: that run is 16).
	NOTQ   BX
	LZCNTQ BX, R8

next:
	ADDQ $64, R12
	CMPQ R12, R11
	JB   loop
	MOVQ R11, R12
	JMP  done

before:
	MOVQ R12, R14
	SUBQ R8, R14
	JMP  next

inside:
	TZCNTQ AX, R14
	ADDQ   R12, R14
	JMP    next

tail:
	// The bytes after the whole blocks, if any: the end of the last 64
	// bytes, read again, with the CX bytes read before shifted out of
	// each mask.
	CMPQ      R12, R11
	JAE       done
	VMOVDQU64 -64(SI)(R11*1), Z0
	MOVQ      R12, CX
	SUBQ      R11, CX
	ADDQ      $64, CX
	JMP       block

done:
	MOVQ pos_base+0(FP), AX
	SUBQ AX, DI
	SHRQ $2, DI
	MOVQ DI, n+72(FP)
	MOVQ R12, end+80(FP)
	MOVQ R8, runOut+88(FP)
	MOVQ R14, tokOut+96(FP)
	MOVB $1, ascii+104(FP)
	MOVL $0x04040404, AX // fPct
	VPBROADCASTD AX, Z8
	VPTESTMB Z8, Z11, K1
	KORTESTQ K1, K1
	SETNE pct+105(FP)
	VZEROUPPER
	RET

notASCII:
	MOVQ $0, n+72(FP)
	MOVQ $0, end+80(FP)
	MOVQ $0, runOut+88(FP)
	MOVQ $0, tokOut+96(FP)
	MOVB $0, ascii+104(FP)
	MOVB $0, pct+105(FP)
	VZEROUPPER
	RET

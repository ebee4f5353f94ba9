/** Random fault schedules, seeds 1–12 (split in files so the runner can use both cores). */
import { randomSuite } from './framework/random-suite.js';

randomSuite(1, 13);

/** Random fault schedules, seeds 49–60 (split in files so the runner can use both cores). */
import { randomSuite } from './framework/random-suite.js';

randomSuite(49, 61);
